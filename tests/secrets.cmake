# Secrets end to end (issue 17 item 5): a campaign whose spec sets HF_TOKEN
# and an ?api_key= URL; nothing stored or printed holds them. The unit tests
# of the redaction function and of the gate's and load generator's call
# sites are in base.cmake, gate.cmake and load.cmake.
rt_add_test(test_redact_campaign COMMAND sh ${CMAKE_SOURCE_DIR}/tests/campaign/redact.sh
            TIMEOUT 120 LABELS e2e)

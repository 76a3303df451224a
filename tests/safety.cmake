# Secrets and untrusted bytes end to end (issue 17): a campaign whose spec
# sets HF_TOKEN and an ?api_key= URL, where nothing stored or printed may
# hold them; and an HTML report of a database holding ill-formed UTF-8, which
# must come out well-formed. The unit tests of the pieces are with their
# modules (test_redact, test_markup, test_gate_redact, test_load_redact).
rt_add_test(test_redact_campaign COMMAND sh ${CMAKE_SOURCE_DIR}/tests/campaign/redact.sh
            TIMEOUT 120 LABELS e2e)
# A store written before redaction existed: what is printed of it is redacted (issue 22).
rt_add_test(test_redact_old COMMAND sh ${CMAKE_SOURCE_DIR}/tests/campaign/redact_old.sh
            TIMEOUT 120 LABELS e2e)
rt_add_test(test_report_utf8 COMMAND sh ${CMAKE_SOURCE_DIR}/tests/reports/report_utf8.sh
            TIMEOUT 120 LABELS rep e2e)

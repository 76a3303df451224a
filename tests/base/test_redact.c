/*
 * Unit tests of rt_redact_secrets, the one redaction function: values of
 * secret-looking environment variables, values registered with
 * rt_secret_add / rt_secret_add_env, and credentials announced in the text
 * (Authorization, Bearer, api_key, URL passwords, HF_TOKEN-style settings);
 * and what it must leave alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "runner/base/rt.h"

static void check(const char *in, const char *want)
{
	char *got = rt_redacted(in);
	if (strcmp(got, want))
		fail_msg("redact(%s)\n  got  %s\n  want %s", in, got, want);
	free(got);
}

static void test_environment(void **state)
{
	(void)state;
	setenv("MY_SERVICE_TOKEN", "tok-0123456789", 1);
	setenv("SHORT_KEY", "abc", 1);
	setenv("PLAIN_SETTING", "visible-value-123", 1);
	check("a tok-0123456789 b tok-0123456789", "a [redacted] b [redacted]");
	check("abc visible-value-123", "abc visible-value-123");
	unsetenv("MY_SERVICE_TOKEN");
}

static void test_registered(void **state)
{
	(void)state;
	rt_secret_add("k3y-from-an-odd-variable"); /* --api-key-env ODD: no KEY in the name */
	rt_secret_add_env("HF_TOKEN", "hf_abcdefghijkl");
	rt_secret_add_env("MAX_NUM_BATCHED_TOKENS", "8192"); /* short: a count, not a secret */
	rt_secret_add_env("VLLM_ATTENTION_BACKEND", "ROCM_AITER_FA"); /* not a secret name */
	rt_secret_add("xy");                                  /* too short to replace */
	check("echo: k3y-from-an-odd-variable!", "echo: [redacted]!");
	check("HF_TOKEN hf_abcdefghijkl -> unset", "HF_TOKEN [redacted] -> unset");
	check("batch 8192, backend ROCM_AITER_FA, xy", "batch 8192, backend ROCM_AITER_FA, xy");
}

static void test_url(void **state)
{
	(void)state;
	rt_secret_add_url("https://me:pw-0123@h.example/v1?x=1&api_key=q-key-1-abcdef"
			  "&TOKEN=q-tok-2-abcdef#f");
	rt_secret_add_url("http://127.0.0.1:8000/v1"); /* nothing to take */
	rt_secret_add_url("http://h/v1?key=true&token=test");     /* too short to be credentials */
	rt_secret_add_url(NULL);
	check("pw-0123 q-key-1-abcdef q-tok-2-abcdef x=1 8000 true test",
	      "[redacted] [redacted] [redacted] x=1 8000 true test");
}

static void test_announced(void **state)
{
	(void)state;
	check("Authorization: Bearer sk-live-1", "Authorization: Bearer [redacted]");
	check("authorization=Basic dXNlcjpwYXNz\n", "authorization=Basic [redacted]\n");
	check("{\"authorization\": \"Bearer sk-2\"}", "{\"authorization\": \"Bearer [redacted]\"}");
	check("{\"Authorization\":\"sk-3\"}", "{\"Authorization\":\"[redacted]\"}");
	check("got bearer sk-4; bye", "got bearer [redacted]; bye");
	check("http://h:8000/v1?api_key=sk-5&x=1", "http://h:8000/v1?api_key=[redacted]&x=1");
	check("{\"api_key\": \"sk-6\", \"n\": 1}", "{\"api_key\": \"[redacted]\", \"n\": 1}");
	check("x-api-key: sk-7\r\n", "x-api-key: [redacted]\r\n");
	check("APIKEY=sk-8 OPENAI_API_KEY=sk-9", "APIKEY=[redacted] OPENAI_API_KEY=[redacted]");
	check("https://user:pa55word@example.com/x", "https://user:[redacted]@example.com/x");
	check("env:\n  HF_TOKEN: hf_zzzzzzzzzz\n  OTHER: 1\n", "env:\n  HF_TOKEN: [redacted]\n  OTHER: 1\n");
	check("\"WANDB_API_KEY\":\"0123456789abcdef\"", "\"WANDB_API_KEY\":\"[redacted]\"");
	check("Bearer [redacted] stays", "Bearer [redacted] stays");
}

static void test_left_alone(void **state)
{
	(void)state;
	check("max_tokens: 256, prompt_tokens=4096000", "max_tokens: 256, prompt_tokens=4096000");
	check("MAX_TOKENS=4096", "MAX_TOKENS=4096");
	check("--api-key-env NAME and api_key_env", "--api-key-env NAME and api_key_env");
	check("http://127.0.0.1:8000/v1/completions", "http://127.0.0.1:8000/v1/completions");
	check("KEYBOARD layout, the tokenizer: ok", "KEYBOARD layout, the tokenizer: ok");
	check("", "");
	assert_null(rt_redacted(NULL));
	struct rt_sb sb = RT_SB_INIT;
	rt_sb_adds(&sb, "api_key=sk-10 and Bearer sk-11");
	assert_int_equal(rt_redact_secrets(&sb), 2);
	assert_string_equal(sb.buf, "api_key=[redacted] and Bearer [redacted]");
	rt_sb_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_registered),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_announced),
		cmocka_unit_test(test_left_alone),
	};
	return cmocka_run_group_tests_name("redact", tests, NULL, NULL);
}

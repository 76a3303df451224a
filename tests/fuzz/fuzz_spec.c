/*
 * Fuzz harness: the spec loader and its normalized dump. The input is a
 * spec's YAML. Whatever it holds, loading never crashes and either succeeds
 * or says why; a spec that loads dumps to a normalized YAML that loads again
 * and dumps to the same text (spec_dump's promise: `ratchet check` output
 * re-checks to itself), and its JSON form has the same name.
 */
#include "tests/fuzz/fuzz.h"

#include <string.h>

#include "runner/spec/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spec *s = NULL, *s2 = NULL;
	struct rt_sb err = RT_SB_INIT, d1 = RT_SB_INIT, d2 = RT_SB_INIT;
	int rc = spec_load_text("/fuzz/spec.yaml", (const char *)data, size, &s, &err);
	FUZZ_CHECK(rc == 0 || rc == RT_EUSAGE, "spec_load_text returned %d", rc);
	FUZZ_CHECK(rc == 0 || err.len > 0, "an error without a message");
	if (rc == 0) {
		spec_dump(s, &d1);
		rt_sb_reset(&err);
		rc = spec_load_text("/fuzz/dump.yaml", d1.buf, d1.len, &s2, &err);
		FUZZ_CHECK(rc == 0, "the normalized spec does not load: %s\n---\n%s", err.buf, d1.buf);
		spec_dump(s2, &d2);
		FUZZ_CHECK(d1.len == d2.len && !memcmp(d1.buf, d2.buf, d1.len),
			   "the normalized spec reloads to another one:\n%s\n---\n%s", d1.buf, d2.buf);
		json_t *j = spec_to_json(s);
		FUZZ_CHECK(j && json_is_object(j), "spec_to_json gave no object");
		const char *name = json_string_value(json_object_get(j, "name"));
		FUZZ_CHECK(name && !strcmp(name, s->name), "the JSON form lost the name");
		json_decref(j);
	}
	spec_free(s);
	spec_free(s2);
	rt_sb_release(&err);
	rt_sb_release(&d1);
	rt_sb_release(&d2);
	return 0;
}

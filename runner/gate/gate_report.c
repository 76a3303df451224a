/*
 * What a gate run leaves for people and CI: JUnit XML (one testsuite, one
 * testcase for the verdict, the figures as properties), a Markdown summary
 * for $GITHUB_STEP_SUMMARY, and a JSON object for --json. None of these
 * ever holds the API key: they are built from the result alone.
 */
#include "runner/gate/gate.h"
#include "runner/gate/gsm8k.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void prop(struct rt_sb *sb, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void prop(struct rt_sb *sb, const char *name, const char *fmt, ...)
{
	char v[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	rt_sb_addf(sb, "    <property name=\"%s\" value=\"", name);
	rt_sb_add_markup(sb, v);
	rt_sb_adds(sb, "\"/>\n");
}

static const char *status_name(enum run_gate_status s)
{
	return s == RUN_GATE_PASS ? "pass" : s == RUN_GATE_FAIL ? "fail" : "error";
}

static void list_ints(struct rt_sb *sb, const int *v, size_t n, const char *sep)
{
	for (size_t i = 0; i < n; i++)
		rt_sb_addf(sb, "%s%d", i ? sep : "", v[i]);
}

int run_gate_write_junit(const struct run_gate_result *r, const struct spec_gate *cfg,
			 const char *path, struct rt_sb *err)
{
	struct rt_sb x = RT_SB_INIT;
	bool fail = r->status == RUN_GATE_FAIL, error = r->status == RUN_GATE_ERROR;
	rt_sb_adds(&x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	rt_sb_addf(&x,
		   "<testsuite name=\"ratchet.gate\" tests=\"1\" failures=\"%d\" errors=\"%d\" "
		   "skipped=\"0\" time=\"%.3f\">\n",
		   fail, error, r->wall_s);
	rt_sb_adds(&x, "  <properties>\n");
	prop(&x, "status", "%s", status_name(r->status));
	prop(&x, "run_id", "%lld", (long long)r->run_id);
	prop(&x, "format", "%s", gsm8k_format_name(cfg->format));
	prop(&x, "extract", "%s", cfg->extract == SPEC_EXTRACT_STRICT ? "strict" : "flexible");
	prop(&x, "accuracy", "%.6f", r->accuracy);
	prop(&x, "accuracy_strict", "%.6f", r->acc_strict);
	prop(&x, "accuracy_flexible", "%.6f", r->acc_flex);
	prop(&x, "wilson_lo", "%.6f", r->wilson_lo);
	prop(&x, "wilson_hi", "%.6f", r->wilson_hi);
	prop(&x, "planned", "%d", r->n_planned);
	prop(&x, "answered", "%d", r->n_scored);
	prop(&x, "correct", "%d", r->n_correct);
	prop(&x, "failed", "%d", r->n_failed);
	prop(&x, "early_stop", "%s", r->early_stop ? "true" : "false");
	prop(&x, "min_accuracy", "%.6f", cfg->min_accuracy);
	if (r->baseline_run_id > 0) {
		prop(&x, "baseline_run_id", "%lld", (long long)r->baseline_run_id);
		prop(&x, "diff", "%.6f", r->diff);
		prop(&x, "diff_lo", "%.6f", r->diff_lo);
		prop(&x, "diff_hi", "%.6f", r->diff_hi);
		prop(&x, "mcnemar_midp", "%.6g", r->mcnemar_p);
		prop(&x, "identical_rate", "%.6f", r->identical_rate);
		prop(&x, "identical_response_rate", "%.6f", r->identical_response_rate);
		prop(&x, "flips_to_wrong", "%zu", r->n_flips_to_wrong);
		prop(&x, "flips_to_right", "%zu", r->n_flips_to_right);
	}
	rt_sb_adds(&x, "  </properties>\n");
	rt_sb_addf(&x, "  <testcase classname=\"ratchet.gate\" name=\"gsm8k\" time=\"%.3f\"",
		   r->wall_s);
	if (!fail && !error) {
		rt_sb_adds(&x, "/>\n");
	} else {
		rt_sb_addf(&x, ">\n    <%s message=\"", fail ? "failure" : "error");
		rt_sb_add_markup(&x, r->verdict);
		rt_sb_addf(&x, "\" type=\"%s\">", fail ? "GateFailed" : "GateError");
		rt_sb_add_markup(&x, r->verdict);
		if (r->n_flips_to_wrong) {
			rt_sb_adds(&x, "\nflipped to wrong: ");
			list_ints(&x, r->flips_to_wrong, r->n_flips_to_wrong, ", ");
		}
		rt_sb_addf(&x, "</%s>\n  </testcase>\n", fail ? "failure" : "error");
	}
	rt_sb_adds(&x, "</testsuite>\n");
	int rc = rt_write_file_atomic(path, x.buf, x.len, 0644, err);
	rt_sb_release(&x);
	return rc;
}

int run_gate_write_summary(const struct run_gate_result *r, const struct spec_gate *cfg,
			   const char *path, bool append, struct rt_sb *err)
{
	struct rt_sb m = RT_SB_INIT;
	const char *icon = r->status == RUN_GATE_PASS ? "PASS" : r->status == RUN_GATE_FAIL ? "FAIL"
											 : "ERROR";
	rt_sb_addf(&m, "## GSM8K gate: %s\n\n", icon);
	/* The verdict may hold server text only via numbers; still keep pipes out of tables. */
	rt_sb_addf(&m, "%s\n\n", r->verdict ? r->verdict : "");
	rt_sb_adds(&m, "| figure | value |\n|---|---|\n");
	rt_sb_addf(&m, "| format | %s (%s decides) |\n", gsm8k_format_name(cfg->format),
		   cfg->extract == SPEC_EXTRACT_STRICT ? "strict-match" : "flexible-extract");
	if (r->n_scored) {
		rt_sb_addf(&m, "| accuracy | %.4f (%d/%d) |\n", r->accuracy, r->n_correct, r->n_scored);
		rt_sb_addf(&m, "| Wilson interval | [%.4f, %.4f] |\n", r->wilson_lo, r->wilson_hi);
		rt_sb_addf(&m, "| strict-match / flexible-extract | %.4f / %.4f |\n", r->acc_strict,
			   r->acc_flex);
	} else { /* nothing answered: no accuracy to show, the verdict says why */
		rt_sb_adds(&m, "| accuracy | — (no question was answered) |\n");
	}
	rt_sb_addf(&m, "| questions | %d planned, %d answered, %d failed%s |\n", r->n_planned,
		   r->n_scored, r->n_failed, r->early_stop ? ", stopped early" : "");
	rt_sb_addf(&m, "| min accuracy | %.4f%s |\n", cfg->min_accuracy,
		   cfg->use_wilson_lower ? " (Wilson lower bound)" : "");
	if (r->baseline_run_id > 0) {
		rt_sb_addf(&m, "| baseline | run %lld, %d paired questions |\n",
			   (long long)r->baseline_run_id, r->n_paired);
		rt_sb_addf(&m, "| difference | %+.4f [%+.4f, %+.4f] (max drop %.4f) |\n", r->diff,
			   r->diff_lo, r->diff_hi, cfg->max_drop);
		rt_sb_addf(&m, "| McNemar mid-p | %.4g (alpha %g) |\n", r->mcnemar_p, cfg->alpha);
		rt_sb_addf(&m, "| identical answers | %.2f%% |\n", r->identical_rate * 100);
		rt_sb_addf(&m, "| identical responses | %.2f%% |\n", r->identical_response_rate * 100);
		rt_sb_addf(&m, "| flips to wrong | %zu |\n| flips to right | %zu |\n",
			   r->n_flips_to_wrong, r->n_flips_to_right);
		if (r->n_flips_to_wrong) {
			rt_sb_adds(&m, "\nFlipped to wrong (question index): ");
			list_ints(&m, r->flips_to_wrong, r->n_flips_to_wrong, ", ");
			rt_sb_adds(&m, "\n");
		}
		if (r->n_flips_to_right) {
			rt_sb_adds(&m, "\nFlipped to right (question index): ");
			list_ints(&m, r->flips_to_right, r->n_flips_to_right, ", ");
			rt_sb_adds(&m, "\n");
		}
	}
	rt_sb_addf(&m, "\nStored as gate run %lld.\n", (long long)r->run_id);
	int rc = 0;
	if (append) {
		FILE *f = fopen(path, "a");
		if (!f || fwrite(m.buf, 1, m.len, f) != m.len)
			rc = rt_errf(err, RT_EIO, "%s: cannot append the summary", path);
		if (f && fclose(f) && !rc)
			rc = rt_errf(err, RT_EIO, "%s: cannot append the summary", path);
	} else {
		rc = rt_write_file_atomic(path, m.buf, m.len, 0644, err);
	}
	rt_sb_release(&m);
	return rc;
}

static json_t *num(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static json_t *ints(const int *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

void run_gate_json(const struct run_gate_result *r, struct rt_sb *out)
{
	json_t *o = json_object();
	json_object_set_new(o, "run_id", json_integer(r->run_id));
	json_object_set_new(o, "status", json_string(status_name(r->status)));
	json_object_set_new(o, "passed", json_boolean(r->passed));
	json_object_set_new(o, "planned", json_integer(r->n_planned));
	json_object_set_new(o, "done", json_integer(r->n_done));
	json_object_set_new(o, "answered", json_integer(r->n_scored));
	json_object_set_new(o, "correct", json_integer(r->n_correct));
	json_object_set_new(o, "failed", json_integer(r->n_failed));
	json_object_set_new(o, "accuracy", num(r->accuracy));
	json_object_set_new(o, "accuracy_strict", num(r->acc_strict));
	json_object_set_new(o, "accuracy_flexible", num(r->acc_flex));
	json_object_set_new(o, "wilson_lo", num(r->wilson_lo));
	json_object_set_new(o, "wilson_hi", num(r->wilson_hi));
	json_object_set_new(o, "early_stop", json_boolean(r->early_stop));
	if (r->baseline_run_id > 0) {
		json_object_set_new(o, "baseline_run_id", json_integer(r->baseline_run_id));
		json_object_set_new(o, "paired", json_integer(r->n_paired));
		json_object_set_new(o, "baseline_accuracy", num(r->base_accuracy));
		json_object_set_new(o, "diff", num(r->diff));
		json_object_set_new(o, "diff_lo", num(r->diff_lo));
		json_object_set_new(o, "diff_hi", num(r->diff_hi));
		json_object_set_new(o, "mcnemar_midp", num(r->mcnemar_p));
		json_object_set_new(o, "identical_rate", num(r->identical_rate));
		json_object_set_new(o, "identical_response_rate", num(r->identical_response_rate));
		json_object_set_new(o, "flips_to_wrong", ints(r->flips_to_wrong, r->n_flips_to_wrong));
		json_object_set_new(o, "flips_to_right", ints(r->flips_to_right, r->n_flips_to_right));
	}
	json_object_set_new(o, "wall_s", json_real(r->wall_s));
	json_object_set_new(o, "cpu_s", json_real(r->cpu_s));
	json_object_set_new(o, "verdict", json_string(r->verdict ? r->verdict : ""));
	char *s = json_dumps(o, JSON_COMPACT);
	rt_sb_adds(out, s);
	free(s);
	json_decref(o);
}

/*
 * The read-only routes of the engine personalities, in each real program's
 * JSON shapes (versions cited in persona.c): /health, /v1/models, vLLM's
 * /version, llama-server's /props, SGLang's /get_model_info and
 * /get_server_info, and /metrics in Prometheus text with the program's
 * metric names (vllm:, llamacpp:, sglang:). llama-server answers every route
 * with 503 "Loading model" while it loads. Completions stay in http.c.
 */
#include "persona.h"

#include <microhttpd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define P ss_P

/* GET /v1/models in the program's shape. */
static char *models_body(void)
{
	long long now = (long long)time(NULL);
	json_t *data = json_array();
	int n = P.n_served ? P.n_served : 1;
	for (int i = 0; i < n; i++) {
		const char *id = P.n_served ? P.served[i] : P.cfg->model;
		json_t *m = json_pack("{s:s,s:s,s:I}", "id", id, "object", "model", "created", now);
		if (P.kind == SS_PERSONA_VLLM) {
			/* ModelCard: root is the model path, one ModelPermission */
			json_object_set_new(m, "owned_by", json_string("vllm"));
			json_object_set_new(m, "root", json_string(P.model));
			json_object_set_new(m, "parent", json_null());
			json_object_set_new(m, "max_model_len", json_integer(P.max_model_len));
			json_object_set_new(m, "permission", json_pack(
				"[{s:s,s:s,s:I,s:b,s:b,s:b,s:b,s:b,s:b,s:s,s:n,s:b}]",
				"id", "modelperm-5e1f0c7a9b2d4e6f8a0b1c2d3e4f5a6b", "object", "model_permission",
				"created", now, "allow_create_engine", 0, "allow_sampling", 1,
				"allow_logprobs", 1, "allow_search_indices", 0, "allow_view", 1,
				"allow_fine_tuning", 0, "organization", "*", "group", "is_blocking", 0));
		} else if (P.kind == SS_PERSONA_LLAMA) {
			json_object_set_new(m, "owned_by", json_string("llamacpp"));
			json_object_set_new(m, "meta", json_pack("{s:i,s:i,s:i,s:i,s:I,s:I}", "vocab_type", 2,
								 "n_vocab", 262144, "n_ctx_train", 131072,
								 "n_embd", 5376, "n_params", (json_int_t)27009002240LL,
								 "size", (json_int_t)16543656960LL));
		} else {
			json_object_set_new(m, "owned_by", json_string("sglang"));
			json_object_set_new(m, "root", json_string(id));
			json_object_set_new(m, "max_model_len", json_integer(P.max_model_len));
		}
		json_array_append_new(data, m);
	}
	json_t *o = json_pack("{s:s,s:o}", "object", "list", "data", data);
	if (P.kind == SS_PERSONA_LLAMA) /* llama-server also answers in Ollama's shape */
		json_object_set_new(o, "models", json_pack("[{s:s,s:s,s:s,s:[s]}]", "name", P.cfg->model,
							   "model", P.cfg->model, "type", "model",
							   "capabilities", "completion"));
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

/* /version, /props or /get_server_info. */
static char *info_body(void)
{
	struct ss_config *cfg = P.cfg;
	json_t *o;
	if (P.kind == SS_PERSONA_VLLM) {
		o = json_pack("{s:s}", "version", SS_VLLM_VERSION);
	} else if (P.kind == SS_PERSONA_LLAMA) {
		long slots = cfg->max_batch;
		o = json_pack("{s:{s:I,s:{s:I,s:I}},s:I,s:s,s:s,s:{s:b,s:b},s:s}",
			      "default_generation_settings", "n_ctx",
			      (json_int_t)ss_persona_slot_ctx(), "params", "n_predict",
			      (json_int_t)-1, "seed", (json_int_t)cfg->seed, "total_slots", (json_int_t)slots,
			      "model_path", P.model, "chat_template", "{{ messages }}", "modalities",
			      "vision", 0, "audio", 0, "build_info", "b6700-simserve");
	} else {
		o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:b,s:s,s:[{s:I}]}", "model_path", P.model,
			      "served_model_name", cfg->model, "host", cfg->host, "port", (json_int_t)cfg->port,
			      "max_running_requests", (json_int_t)cfg->max_batch, "chunked_prefill_size",
			      (json_int_t)cfg->chunked_prefill, "cuda_graph_max_bs",
			      (json_int_t)cfg->max_graph_bs, "disable_cuda_graph", P.n_capture == 0,
			      "version", SS_SGLANG_VERSION, "internal_states", "last_gen_throughput",
			      (json_int_t)0);
	}
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

/* One Prometheus sample with # HELP and # TYPE. */
static void metric(struct rt_sb *sb, const char *prefix, const char *name, const char *type,
		   const char *help, const char *labels, double v)
{
	rt_sb_addf(sb, "# HELP %s%s %s\n# TYPE %s%s %s\n%s%s{%s} %.1f\n", prefix, name, help, prefix,
		   name, type, prefix, name, labels, v);
}

static char *metrics_body(void)
{
	struct ss_stats st;
	ss_sched_stats(&st);
	struct rt_sb sb = RT_SB_INIT;
	char lab[512];
	const char *m = P.cfg->model;
	if (P.kind == SS_PERSONA_VLLM) {
		/* vLLM V1 (vllm/v1/metrics/loggers.py): engine and model_name labels */
		snprintf(lab, sizeof(lab), "engine=\"0\",model_name=\"%s\"", m);
		metric(&sb, "vllm:", "num_requests_running", "gauge", "Number of requests in model execution batches.", lab, (double)st.running);
		metric(&sb, "vllm:", "num_requests_waiting", "gauge", "Number of requests waiting to be processed.", lab, (double)st.waiting);
		metric(&sb, "vllm:", "kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", lab,
		       (double)st.running / (double)P.cfg->max_batch);
		metric(&sb, "vllm:", "num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", lab, 0);
		metric(&sb, "vllm:", "prompt_tokens_total", "counter", "Number of prefill tokens processed.", lab, (double)st.prompt_tokens);
		metric(&sb, "vllm:", "generation_tokens_total", "counter", "Number of generation tokens processed.", lab, (double)st.gen_tokens);
		rt_sb_addf(&sb, "# HELP vllm:request_success_total Count of successfully processed requests.\n"
				"# TYPE vllm:request_success_total counter\n"
				"vllm:request_success_total{%s,finished_reason=\"stop\"} %.1f\n"
				"vllm:request_success_total{%s,finished_reason=\"length\"} %.1f\n",
			   lab, (double)st.done_stop, lab, (double)st.done_length);
		rt_sb_addf(&sb, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
				"# TYPE vllm:cache_config_info gauge\n"
				"vllm:cache_config_info{cache_dtype=\"%s\",engine=\"0\"} 1.0\n",
			   P.kv_dtype ? P.kv_dtype : "auto");
	} else if (P.kind == SS_PERSONA_LLAMA) {
		metric(&sb, "llamacpp:", "prompt_tokens_total", "counter", "Number of prompt tokens processed.", "", (double)st.prompt_tokens);
		metric(&sb, "llamacpp:", "tokens_predicted_total", "counter", "Number of generation tokens processed.", "", (double)st.gen_tokens);
		metric(&sb, "llamacpp:", "requests_processing", "gauge", "Number of requests processing.", "", (double)st.running);
		metric(&sb, "llamacpp:", "requests_deferred", "gauge", "Number of requests deferred.", "", (double)st.waiting);
	} else {
		snprintf(lab, sizeof(lab), "model_name=\"%s\"", m);
		metric(&sb, "sglang:", "num_running_reqs", "gauge", "The number of running requests.", lab, (double)st.running);
		metric(&sb, "sglang:", "num_queue_reqs", "gauge", "The number of requests in the waiting queue.", lab, (double)st.waiting);
		metric(&sb, "sglang:", "prompt_tokens_total", "counter", "Number of prefill tokens processed.", lab, (double)st.prompt_tokens);
		metric(&sb, "sglang:", "generation_tokens_total", "counter", "Number of generation tokens processed.", lab, (double)st.gen_tokens);
	}
	size_t len;
	return rt_sb_detach(&sb, &len);
}

/* The program's answer for a path it does not have. */
static int not_found(struct MHD_Connection *c)
{
	if (P.kind == SS_PERSONA_LLAMA)
		return ss_http_reply(c, 404, "{\"error\":{\"code\":404,\"message\":\"File Not Found\","
					     "\"type\":\"not_found_error\"}}", "application/json");
	return ss_http_reply(c, 404, "{\"detail\":\"Not Found\"}", "application/json");
}

static int serve_metrics(struct MHD_Connection *c)
{
	if (P.kind != SS_PERSONA_VLLM && !P.metrics) {
		if (P.kind == SS_PERSONA_SGLANG)
			return not_found(c);
		return ss_http_reply(c, 501, "{\"error\":{\"code\":501,\"message\":\"This server does not "
					     "support metrics endpoint. Start it with `--metrics`\","
					     "\"type\":\"not_supported_error\"}}", "application/json");
	}
	char *body = metrics_body();
	int rc = ss_http_reply(c, 200, body, "text/plain; version=0.0.4; charset=utf-8");
	free(body);
	return rc;
}

void ss_persona_bodies(void)
{
	P.models_body = models_body();
	P.info_body = info_body();
}

bool ss_persona_route(struct MHD_Connection *c, const char *url, const char *method, int *result)
{
	if (P.kind == SS_PERSONA_LLAMA && atomic_load(&P.loading)) {
		*result = ss_http_reply(c, 503, "{\"error\":{\"code\":503,\"message\":\"Loading model\","
						"\"type\":\"unavailable_error\"}}", "application/json");
		return true;
	}
	if (!strcmp(url, "/v1/completions") || !strcmp(url, "/v1/chat/completions"))
		return false;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		*result = ss_http_reply(c, 405, "{\"detail\":\"Method Not Allowed\"}", "application/json");
		return true;
	}
	bool llama = P.kind == SS_PERSONA_LLAMA, sglang = P.kind == SS_PERSONA_SGLANG;
	const char *json = "application/json";
	if (!strcmp(url, "/health") || (llama && !strcmp(url, "/v1/health")) ||
	    (!llama && !strcmp(url, "/ping")) || (sglang && !strcmp(url, "/health_generate")))
		*result = ss_http_reply(c, 200, llama ? "{\"status\":\"ok\"}" : "", json);
	else if (!strcmp(url, "/v1/models") || (llama && !strcmp(url, "/models")))
		*result = ss_http_reply(c, 200, P.models_body, json);
	else if ((P.kind == SS_PERSONA_VLLM && !strcmp(url, "/version")) ||
		 (llama && !strcmp(url, "/props")) || (sglang && !strcmp(url, "/get_server_info")))
		*result = ss_http_reply(c, 200, P.info_body, json);
	else if (sglang && !strcmp(url, "/get_model_info")) {
		json_t *o = json_pack("{s:s,s:s,s:b}", "model_path", P.model, "tokenizer_path", P.model,
				      "is_generation", 1);
		char *s = json_dumps(o, JSON_COMPACT);
		*result = ss_http_reply(c, 200, s, json);
		free(s);
		json_decref(o);
	} else if (!strcmp(url, "/metrics"))
		*result = serve_metrics(c);
	else
		*result = not_found(c);
	return true;
}

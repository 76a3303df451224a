/*
 * Profiles: each reader on a small fixture in its tool's exact format
 * (tests/agents/fixtures, each naming its source), the shares checked by hand
 * in the fixture's comment; the default op map on real kernel names of vLLM,
 * AITER, llama.cpp/ggml, Triton, cuBLAS, Tensile and NCCL; format detection;
 * a Chrome trace streamed in constant memory; errors that name the file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agents/research/profile.h"

static char *fixture(const char *name)
{
	const char *src = getenv("RATCHET_SRC");
	return xasprintf("%s/tests/agents/fixtures/%s", src ? src : "..", name);
}

/* Read path with format into p, with the default map (the caller releases). */
static void read_as(const char *format, const char *path, struct research_profile *p,
		    struct research_opmap **map)
{
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_opmap_new(NULL, map, &err), 0);
	research_profile_init(p, *map);
	const struct research_format *f = NULL;
	assert_int_equal(research_format_find(format, path, &f, &err), 0);
	int rc = f->read(path, p, &err);
	if (rc)
		fail_msg("%s: %s", path, err.buf);
	rt_sb_release(&err);
}

static void done(struct research_profile *p, struct research_opmap *map)
{
	research_profile_release(p);
	research_opmap_free(map);
}

/* Shares per op, in percent. */
static void shares(const struct research_profile *p, double pct[RESEARCH_N_OPS])
{
	struct research_op_sum s[RESEARCH_N_OPS];
	research_profile_ops(p, s);
	for (int i = 0; i < RESEARCH_N_OPS; i++)
		pct[i] = s[i].share * 100;
}

#define near(a, b) assert_true(fabs((a) - (b)) < 1e-6)

static void test_chrome_kineto(void **state)
{
	(void)state;
	char *path = fixture("kineto_vllm_decode.json");
	struct research_profile p;
	struct research_opmap *map;
	read_as("chrome", path, &p, &map);
	near(p.total_us, 2000);
	assert_int_equal(p.launches, 12);
	assert_int_equal(p.steps, 2); /* ProfilerStep#2, #3; not their gpu_user_annotation twins */
	double s[RESEARCH_N_OPS];
	shares(&p, s);
	near(s[RESEARCH_OP_GEMM], 50);
	near(s[RESEARCH_OP_ATTENTION], 32);
	near(s[RESEARCH_OP_ACTIVATION], 10);
	near(s[RESEARCH_OP_NORM], 5);
	near(s[RESEARCH_OP_COMMUNICATION], 3);
	near(s[RESEARCH_OP_OTHER], 0);
	struct research_op_sum sum[RESEARCH_N_OPS];
	research_profile_ops(&p, sum);
	assert_int_equal(sum[RESEARCH_OP_ATTENTION].calls, 4); /* 2 per step */
	done(&p, map);
	free(path);
}

static void test_nsys_llamacpp(void **state)
{
	(void)state;
	char *sql_path = fixture("nsys_llamacpp_decode.sql");
	char *sql;
	size_t len;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(rt_read_file(sql_path, &sql, &len, &err), 0);
	char db_path[] = "/tmp/rt-nsys-XXXXXX";
	int fd = mkstemp(db_path);
	assert_true(fd >= 0);
	close(fd);
	sqlite3 *h;
	assert_int_equal(sqlite3_open(db_path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	struct research_profile p;
	struct research_opmap *map;
	read_as(NULL, db_path, &p, &map); /* detected */
	assert_string_equal(p.format ? p.format : "nsys", "nsys");
	near(p.total_us, 10);
	assert_int_equal(p.launches, 12);
	assert_int_equal(p.steps, 2);
	double s[RESEARCH_N_OPS];
	shares(&p, s);
	near(s[RESEARCH_OP_GEMM], 79);
	near(s[RESEARCH_OP_ATTENTION], 10);
	near(s[RESEARCH_OP_NORM], 5);
	near(s[RESEARCH_OP_QUANTIZE], 4);
	near(s[RESEARCH_OP_OTHER], 2);
	done(&p, map);
	unlink(db_path);
	free(sql);
	free(sql_path);
	rt_sb_release(&err);
}

static void test_rocprofv3_aiter(void **state)
{
	(void)state;
	char *path = fixture("rocprofv3_aiter_kernel_trace.csv");
	struct research_profile p;
	struct research_opmap *map;
	read_as(NULL, path, &p, &map);
	near(p.total_us, 20);
	assert_int_equal(p.launches, 7);
	double s[RESEARCH_N_OPS];
	shares(&p, s);
	near(s[RESEARCH_OP_GEMM], 40);
	near(s[RESEARCH_OP_ATTENTION], 40);
	near(s[RESEARCH_OP_ACTIVATION], 10);
	near(s[RESEARCH_OP_NORM], 5);
	near(s[RESEARCH_OP_QUANTIZE], 5);
	done(&p, map);
	free(path);
}

static void test_unitrace_xpu(void **state)
{
	(void)state;
	char *path = fixture("unitrace_xpu_device_timing.txt");
	struct research_profile p;
	struct research_opmap *map;
	read_as(NULL, path, &p, &map);
	near(p.total_us, 1000);
	assert_int_equal(p.launches, 105);
	double s[RESEARCH_N_OPS];
	shares(&p, s);
	near(s[RESEARCH_OP_GEMM], 60);
	near(s[RESEARCH_OP_ATTENTION], 25);
	near(s[RESEARCH_OP_ACTIVATION], 8);
	near(s[RESEARCH_OP_NORM], 5);
	near(s[RESEARCH_OP_OTHER], 2);
	/* -v's launch shape comes from the name */
	research_profile_sort(&p);
	assert_string_equal(p.k[0].shape, "SIMD32 {16;8;1} {256;1;1}");
	done(&p, map);
	free(path);
}

static void test_detect(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		const char *format;
	} cases[] = {
		{ "kineto_vllm_decode.json", "chrome" },
		{ "rocprofv3_aiter_kernel_trace.csv", "rocprof" },
		{ "unitrace_xpu_device_timing.txt", "unitrace" },
	};
	struct rt_sb err = RT_SB_INIT;
	for (size_t i = 0; i < RT_ARRAY_SIZE(cases); i++) {
		char *path = fixture(cases[i].file);
		const struct research_format *f = NULL;
		assert_int_equal(research_format_find(NULL, path, &f, &err), 0);
		assert_string_equal(f->name, cases[i].format);
		free(path);
	}
	char *path = fixture("nsys_llamacpp_decode.sql"); /* SQL text is no profile */
	const struct research_format *f = NULL;
	assert_int_equal(research_format_find(NULL, path, &f, &err), RT_EUSAGE);
	assert_non_null(strstr(err.buf, "not a profile this ratchet reads"));
	rt_sb_reset(&err);
	assert_int_equal(research_format_find("perfetto", path, &f, &err), RT_EUSAGE);
	assert_non_null(strstr(err.buf, "unknown profile format 'perfetto'"));
	free(path);
	rt_sb_release(&err);
}

/* Real kernel names and the op the default map gives them. */
static void test_default_map(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		enum research_op op;
	} cases[] = {
		/* vLLM CUDA and Triton */
		{ "void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128, (vllm::Fp8KVCacheDataType)0, false, 512>(float*, float*, __nv_bfloat16*, __nv_bfloat16 const*)", RESEARCH_OP_ATTENTION },
		{ "kernel_unified_attention_2d", RESEARCH_OP_ATTENTION },
		{ "_fwd_kernel", RESEARCH_OP_ATTENTION },
		{ "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*)", RESEARCH_OP_ATTENTION },
		{ "void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*)", RESEARCH_OP_NORM },
		{ "void vllm::dynamic_scaled_int8_quant_kernel<c10::BFloat16, float>(c10::BFloat16 const*, signed char*)", RESEARCH_OP_QUANTIZE },
		{ "fused_moe_kernel", RESEARCH_OP_GEMM },
		{ "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals)", RESEARCH_OP_COMMUNICATION },
		{ "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(Params)", RESEARCH_OP_GEMM },
		{ "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_32x6_tn", RESEARCH_OP_GEMM },
		{ "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)", RESEARCH_OP_OTHER },
		{ "triton_poi_fused_mul_silu_0", RESEARCH_OP_ACTIVATION },
		{ "matmul_kernel", RESEARCH_OP_GEMM },
		/* AITER, hipBLASLt/Tensile, RCCL */
		{ "void aiter::paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16>(int)", RESEARCH_OP_ATTENTION },
		{ "aiter::fmha_fwd_hd128_bf16_causal", RESEARCH_OP_ATTENTION },
		{ "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_GRVW8_WG32_8_1", RESEARCH_OP_GEMM },
		{ "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", RESEARCH_OP_COMMUNICATION },
		{ "void aiter::rmsnorm2d_fwd<__hip_bfloat16>(int)", RESEARCH_OP_NORM },
		/* llama.cpp / ggml */
		{ "void mul_mat_q<(ggml_type)8, 64, 128, false>(char const*, char const*, float*)", RESEARCH_OP_GEMM },
		{ "void soft_max_f32<true, 0, 0>(float const*, float const*, float*, int, int, float, float)", RESEARCH_OP_ATTENTION },
		{ "void dequantize_block<32, 2, &dequantize_q4_0, __half>(void const*, __half*, long)", RESEARCH_OP_QUANTIZE },
		{ "void silu_f32(float const*, float*, int)", RESEARCH_OP_ACTIVATION },
		{ "void k_get_rows_float<float, float>(float const*, int const*, float*)", RESEARCH_OP_OTHER },
		/* ggml-cuda kernels as llama.cpp b6000-b7000 declares them (names, not a capture) */
		{ "void mul_mat_vec_q<(ggml_type)8, 1, false>(void const*, void const*, float*, int)", RESEARCH_OP_GEMM },
		{ "void mul_mat_vec<__half, __half, 1, 256>(__half const*, float const*, float*, long)", RESEARCH_OP_GEMM },
		{ "void flash_attn_ext_f16<128, 128, 64, 2, false, false>(char const*, char const*)", RESEARCH_OP_ATTENTION },
		{ "void rms_norm_f32<1024, false>(float const*, float*, int, long, long, long, float)", RESEARCH_OP_NORM },
		{ "void quantize_mmq_q8_1<(mmq_q8_1_ds_layout)1>(float const*, void*, long, long)", RESEARCH_OP_QUANTIZE },
		{ "void quantize_q8_1(float const*, void*, long, long)", RESEARCH_OP_QUANTIZE },
		{ "void rope_norm<true, false, float>(float const*, float*, int, int)", RESEARCH_OP_ATTENTION },
		/* Hopper cuBLAS/cuBLASLt, CUTLASS 3, flash-attention, Triton (Inductor) */
		{ "nvjet_sm90_hsh_128x256_64x4_2x1_v_bz_coopA_relubias_TNT", RESEARCH_OP_GEMM },
		{ "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_TNT", RESEARCH_OP_GEMM },
		{ "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", RESEARCH_OP_GEMM },
		{ "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<4, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> > > > > >(T1::Params)", RESEARCH_OP_GEMM },
		{ "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t>, false, true>(Flash_fwd_params)", RESEARCH_OP_ATTENTION },
		{ "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t> >(pytorch_flash::Flash_fwd_params)", RESEARCH_OP_ATTENTION },
		{ "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)", RESEARCH_OP_ATTENTION },
		{ "triton_tem_fused_addmm_relu_0", RESEARCH_OP_GEMM },
		{ "triton_tem_fused_flex_attention_0", RESEARCH_OP_ATTENTION },
		{ "triton_per_fused__fused_rms_norm__unsafe_view_add_embedding_view_4", RESEARCH_OP_NORM },
		{ "triton_red_fused_argmax_copy__13", RESEARCH_OP_OTHER },
	};
	struct research_opmap *map;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_opmap_new(NULL, &map, &err), 0);
	for (size_t i = 0; i < RT_ARRAY_SIZE(cases); i++) {
		enum research_op got = research_opmap_classify(map, cases[i].name);
		if (got != cases[i].op)
			fail_msg("%s: got %s, want %s", cases[i].name, research_op_names[got],
				 research_op_names[cases[i].op]);
	}
	research_opmap_free(map);
	rt_sb_release(&err);
}

/* A spec's pattern replaces the default one for its op; a bad one is named. */
static void test_spec_map(void **state)
{
	(void)state;
	struct research_opmap_def def = { .op = { [RESEARCH_OP_GEMM] = "^mykern" } };
	struct research_opmap *map;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_opmap_new(&def, &map, &err), 0);
	assert_int_equal(research_opmap_classify(map, "mykern_v2"), RESEARCH_OP_GEMM);
	assert_int_equal(research_opmap_classify(map, "matmul_kernel"), RESEARCH_OP_OTHER);
	research_opmap_free(map);
	def.op[RESEARCH_OP_NORM] = "rms(";
	assert_int_equal(research_opmap_new(&def, &map, &err), RT_EINVAL);
	assert_null(map);
	assert_non_null(strstr(err.buf, "profile.norm: regex 'rms('"));
	rt_sb_release(&err);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The bare-array form; a trace cut short and a broken event are errors that
 * name the file. */
static void test_chrome_forms(void **state)
{
	(void)state;
	char path[] = "/tmp/rt-trace-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct research_opmap *map;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_opmap_new(NULL, &map, &err), 0);
	struct research_profile p;
	write_text(path, "[{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"gemm_a\", \"ts\": 1, \"dur\": 3},\n"
			 " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k[shape=4096x128]\", \"ts\": 5, \"dur\": 1,"
			 "  \"args\": {\"shape\": \"8x8\"}}]\n");
	research_profile_init(&p, map);
	assert_int_equal(research_read_chrome(path, &p, &err), 0);
	near(p.total_us, 4);
	research_profile_sort(&p);
	assert_string_equal(p.k[1].shape, "8x8"); /* args win over the name */
	research_profile_release(&p);

	write_text(path, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"dur\": 1}");
	research_profile_init(&p, map);
	assert_int_equal(research_read_chrome(path, &p, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "cut short"));
	assert_non_null(strstr(err.buf, path));
	research_profile_release(&p);

	rt_sb_reset(&err);
	write_text(path, "{\"traceEvents\": [{\"ph\": \"X\", \"dur\": 1,}]}");
	research_profile_init(&p, map);
	assert_int_equal(research_read_chrome(path, &p, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, "event at byte 17"));
	research_profile_release(&p);
	research_opmap_free(map);
	rt_sb_release(&err);
	unlink(path);
}

static long max_rss_kb(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}

/* 200 MB of trace read with memory for one event and eight kernels: the
 * resident size grows by far less than the file. */
static void test_chrome_streams(void **state)
{
	(void)state;
	char path[] = "/tmp/rt-bigtrace-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("{\"traceEvents\": [\n", f);
	long n = 0;
	size_t bytes = 0;
	while (bytes < (200u << 20)) {
		int w = fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void vllm::kernel_%ld<128>(int)\", "
				"\"pid\": 0, \"tid\": 7, \"ts\": %ld.5, \"dur\": 2.0, \"args\": {\"grid\": [1, 2, 3], "
				"\"note\": \"padding padding padding padding padding padding padding padding\"}}",
				n ? ",\n" : "", n % 8, n);
		bytes += (size_t)w;
		n++;
	}
	fputs("],\n \"traceName\": \"big\"}\n", f);
	fclose(f);
	struct research_opmap *map;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_opmap_new(NULL, &map, &err), 0);
	struct research_profile p;
	research_profile_init(&p, map);
	long before = max_rss_kb();
	assert_int_equal(research_read_chrome(path, &p, &err), 0);
	long grew = max_rss_kb() - before;
	assert_int_equal(p.launches, n);
	assert_int_equal(p.n, 8);
	near(p.total_us, 2.0 * (double)n);
#ifdef __SANITIZE_ADDRESS__
	/* ASan's quarantine keeps freed events resident: no figure to check */
	(void)grew;
#else
	if (grew > 32 * 1024)
		fail_msg("reading %zu bytes grew the resident size by %ld KiB", bytes, grew);
#endif
	research_profile_release(&p);
	research_opmap_free(map);
	rt_sb_release(&err);
	unlink(path);
}

/* The scanner on mangled traces: bytes replaced by JSON's structural
 * characters, cut anywhere. Any answer but a crash (ASan watches) or a
 * success with kernels that were not there. */
static void test_chrome_mangled(void **state)
{
	(void)state;
	char *src = fixture("kineto_vllm_decode.json"), *text;
	size_t len;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(rt_read_file(src, &text, &len, &err), 0);
	char path[] = "/tmp/rt-mangled-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct research_opmap *map;
	assert_int_equal(research_opmap_new(NULL, &map, &err), 0);
	static const char pool[] = "{}[]\",:\\ aX0";
	uint64_t x = 88172645463325252ULL;
	for (int round = 0; round < 400; round++) {
		char *m = xmalloc(len + 1);
		memcpy(m, text, len);
		size_t n = len;
		for (int k = 0; k < 1 + round % 5; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			m[x % n] = pool[(x >> 20) % (sizeof(pool) - 1)];
		}
		if (round % 3 == 0)
			n = (size_t)(x >> 33) % n;
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fwrite(m, 1, n, f);
		fclose(f);
		struct research_profile p;
		research_profile_init(&p, map);
		rt_sb_reset(&err);
		int rc = research_read_chrome(path, &p, &err);
		assert_true(rc == 0 || rc == RT_EPARSE || rc == RT_ETOOBIG);
		assert_true(p.launches <= 12);
		research_profile_release(&p);
		free(m);
	}
	research_opmap_free(map);
	unlink(path);
	free(text);
	free(src);
	rt_sb_release(&err);
}

/* The real traces (tests/agents/fixtures/h200, PyTorch 2.11 on an H200):
 * the class of every kernel in them, written down by hand (by a piece of
 * the name), and each trace's op shares; the kernel time equals the
 * profiler's own summary (*.summary.txt: Self CUDA time total, less the
 * memcpy/memset rows, which are not kernels). */
static const struct {
	const char *piece; /* a substring of the kernel name */
	enum research_op op;
} h200_classes[] = {
	{ "nvjet_sm90_", RESEARCH_OP_GEMM },                        /* cuBLASLt, Hopper */
	{ "cublasLt::splitKreduce_kernel", RESEARCH_OP_GEMM },      /* its split-K reduction */
	{ "cudnn_generated_fort_native_sdpa_", RESEARCH_OP_ATTENTION }, /* cuDNN flash SDPA */
	{ "vectorized_layer_norm_kernel", RESEARCH_OP_NORM },      /* F.rms_norm runs it */
	{ "silu_kernel", RESEARCH_OP_ACTIVATION },
	{ "_fused_rms_norm", RESEARCH_OP_NORM },                    /* Triton, fused */
	{ "mul_silu", RESEARCH_OP_ACTIVATION },                     /* Triton, fused */
	{ "scaled_dot_product_cudnn_attention", RESEARCH_OP_ATTENTION }, /* Triton: the mask */
	{ "MulFunctor", RESEARCH_OP_OTHER },                        /* SwiGLU's gate product */
	{ "direct_copy_kernel_cuda", RESEARCH_OP_OTHER },           /* KV cache writes, copies */
	{ "CUDAFunctor_add", RESEARCH_OP_OTHER },                   /* residual adds */
	{ "CUDAFunctorOnSelf_add", RESEARCH_OP_OTHER },             /* pos += 1 */
	{ "index_copy", RESEARCH_OP_OTHER },                        /* KV cache writes */
	{ "ArgMaxOps", RESEARCH_OP_OTHER },                         /* sampling */
	{ "argmax", RESEARCH_OP_OTHER },
	{ "where_kernel_impl", RESEARCH_OP_OTHER },
	{ "FillFunctor", RESEARCH_OP_OTHER },
	{ "CompareFunctor", RESEARCH_OP_OTHER },
	{ "vectorized_gather_kernel", RESEARCH_OP_OTHER },          /* embedding */
	{ "indexSelectSmallIndex", RESEARCH_OP_OTHER },             /* embedding */
	{ "triton_poi_fused_add_copy_", RESEARCH_OP_OTHER },
};

static void test_real_h200(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		double us; /* the summary's Self CUDA time total less its memcpy/memset rows */
		long launches;
		double gemm, attention, norm, activation, other; /* percent, from the hand classes */
	} traces[] = {
		{ "decode_b4_eager.json", 717.153, 222, 45.3, 13.0, 8.5, 4.3, 29.0 },
		{ "decode_b4_graph.json", 742.581, 222, 44.6, 12.4, 9.0, 4.0, 30.1 },
		{ "decode_b64_eager.json", 1155.720, 222, 29.0, 42.2, 5.6, 3.0, 20.2 },
		{ "decode_b64_graph.json", 1155.254, 222, 28.4, 42.3, 5.7, 2.8, 20.8 },
		{ "prefill_b4_eager.json", 814.427, 114, 52.5, 6.3, 7.1, 8.8, 25.4 },
		{ "prefill_b4_graph.json", 796.286, 114, 53.1, 6.2, 6.8, 8.6, 25.3 },
		{ "prefill_b64_eager.json", 8522.136, 114, 52.4, 4.5, 4.6, 12.1, 26.4 },
		{ "prefill_b64_graph.json", 8545.320, 114, 52.4, 4.5, 4.7, 12.1, 26.3 },
		{ "decode_b4_compiled.json", 515.800, 147, 63.0, 18.5, 6.8, 2.4, 9.3 },
	};
	for (size_t t = 0; t < RT_ARRAY_SIZE(traces); t++) {
		char *name = xasprintf("h200/%s", traces[t].file), *path = fixture(name);
		struct research_profile p;
		struct research_opmap *map;
		read_as("chrome", path, &p, &map);
		if (fabs(p.total_us - traces[t].us) > 0.01)
			fail_msg("%s: kernel time %.3f, want %.3f", name, p.total_us, traces[t].us);
		assert_int_equal(p.launches, traces[t].launches);
		for (size_t i = 0; i < p.n; i++) {
			size_t j = 0;
			while (j < RT_ARRAY_SIZE(h200_classes) && !strstr(p.k[i].name, h200_classes[j].piece))
				j++;
			if (j == RT_ARRAY_SIZE(h200_classes))
				fail_msg("%s: no hand class for %s", name, p.k[i].name);
			if (p.k[i].op != h200_classes[j].op)
				fail_msg("%s: %s is %s, by hand %s", name, p.k[i].name,
					 research_op_names[p.k[i].op], research_op_names[h200_classes[j].op]);
		}
		double s[RESEARCH_N_OPS];
		shares(&p, s);
		double want[][2] = { { s[RESEARCH_OP_GEMM], traces[t].gemm },
				     { s[RESEARCH_OP_ATTENTION], traces[t].attention },
				     { s[RESEARCH_OP_NORM], traces[t].norm },
				     { s[RESEARCH_OP_ACTIVATION], traces[t].activation },
				     { s[RESEARCH_OP_OTHER], traces[t].other } };
		for (size_t i = 0; i < RT_ARRAY_SIZE(want); i++)
			if (fabs(want[i][0] - want[i][1]) > 0.05)
				fail_msg("%s: share %zu is %.2f%%, want %.1f%%", name, i, want[i][0], want[i][1]);
		done(&p, map);
		free(path);
		free(name);
	}
	/* one row of the summary of decode_b4_eager, to the nanosecond */
	char *path = fixture("h200/decode_b4_eager.json");
	struct research_profile p;
	struct research_opmap *map;
	read_as("chrome", path, &p, &map);
	bool seen = false;
	for (size_t i = 0; i < p.n; i++)
		if (!strcmp(p.k[i].name, "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT")) {
			assert_true(fabs(p.k[i].us - 117.312) < 1e-3);
			assert_int_equal(p.k[i].calls, 24);
			seen = true;
		}
	assert_true(seen);
	done(&p, map);
	free(path);
}

/* Nsight Compute 2025.3's CSV of 7 real kernels (tests/agents/fixtures/h200):
 * the details page (us, gpu__time_duration.sum beside the Speed Of Light
 * Duration, counted once) and ncu --csv on stdout (ns with ',' between
 * thousands, ==PROF== lines first). Times summed by hand from the files. */
static void test_ncu_h200(void **state)
{
	(void)state;
	char *path = fixture("h200/ncu_details.csv");
	struct research_profile p;
	struct research_opmap *map;
	read_as(NULL, path, &p, &map);
	assert_int_equal(p.launches, 7);
	assert_int_equal(p.n, 7);
	assert_true(fabs(p.total_us - 701.53) < 1e-6);
	struct research_op_sum sum[RESEARCH_N_OPS];
	research_profile_ops(&p, sum);
	assert_true(fabs(sum[RESEARCH_OP_GEMM].us - (177.34 + 344.22)) < 1e-6); /* nvjet, CUTLASS sgemm */
	assert_true(fabs(sum[RESEARCH_OP_ATTENTION].us - (54.88 + 57.92)) < 1e-6); /* softmax, cuDNN SDPA */
	assert_true(fabs(sum[RESEARCH_OP_NORM].us - (26.59 + 22.02)) < 1e-6);
	assert_true(fabs(sum[RESEARCH_OP_ACTIVATION].us - 18.56) < 1e-6);
	done(&p, map);
	free(path);
	path = fixture("h200/ncu_stdout.csv");
	const struct research_format *f;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_format_find(NULL, path, &f, &err), 0);
	assert_string_equal(f->name, "ncu");
	read_as("ncu", path, &p, &map);
	assert_int_equal(p.launches, 7);
	assert_true(fabs(p.total_us - 700.288) < 1e-6);
	done(&p, map);
	free(path);
	/* a kernel with no time metric is named with its line */
	char tmp[] = "/tmp/ratchet-ncu-XXXXXX";
	int fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	write_text(tmp, "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
			"\"0\",\"k\",\"dram__bytes.sum\",\"Mbyte\",\"1\"\n");
	assert_int_equal(research_opmap_new(NULL, &map, &err), 0);
	research_profile_init(&p, map);
	assert_int_equal(research_read_ncu(tmp, &p, &err), RT_EPARSE);
	assert_non_null(strstr(err.buf, ":2: kernel ID 0 has no gpu__time_duration.sum"));
	done(&p, map);
	unlink(tmp);
	rt_sb_release(&err);
}

/* profile.keys: a kernel's subject to a table key by named groups. */
static void test_opmap_keys(void **state)
{
	(void)state;
	const char *match[] = { "^nvjet_\\S+ aten::mm\\[\\[(?<M>[0-9]+),(?<K>[0-9]+)\\],\\[[0-9]+,(?<N>[0-9]+)\\]\\]$",
				"^flash(?<D>[0-9]+)" };
	const char *tmpl[] = { "{M},{N},{K}", "head{D}" };
	struct research_opmap_def def = { .key_match = match, .key_tmpl = tmpl, .n_keys = 2 };
	struct research_opmap *map;
	struct rt_sb err = RT_SB_INIT;
	assert_int_equal(research_opmap_new(&def, &map, &err), 0);
	assert_true(research_opmap_has_keys(map));
	char *k = research_opmap_key(map, "nvjet_sm90_tst_56x64_64x14_4x1_v_bz_TNN aten::mm[[64,1024],[1024,5632]]");
	assert_string_equal(k, "64,5632,1024");
	free(k);
	k = research_opmap_key(map, "flash128_fwd");
	assert_string_equal(k, "head128");
	free(k);
	assert_null(research_opmap_key(map, "nvjet_sm90_tst aten::addmm[[1],[2]]"));
	research_opmap_free(map);
	const char *bad[] = { "(?<M>" };
	def = (struct research_opmap_def){ .key_match = bad, .key_tmpl = tmpl, .n_keys = 1 };
	assert_int_equal(research_opmap_new(&def, &map, &err), RT_EINVAL);
	assert_non_null(strstr(err.buf, "profile.keys[0].match"));
	assert_false(research_opmap_has_keys(NULL));
	rt_sb_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chrome_kineto),
		cmocka_unit_test(test_nsys_llamacpp),
		cmocka_unit_test(test_rocprofv3_aiter),
		cmocka_unit_test(test_unitrace_xpu),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_default_map),
		cmocka_unit_test(test_spec_map),
		cmocka_unit_test(test_chrome_forms),
		cmocka_unit_test(test_chrome_mangled),
		cmocka_unit_test(test_chrome_streams),
		cmocka_unit_test(test_real_h200),
		cmocka_unit_test(test_ncu_h200),
		cmocka_unit_test(test_opmap_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

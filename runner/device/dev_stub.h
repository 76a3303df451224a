/*
 * A backend that was not built: DEV_STUB_OPS(cuda) defines dev_cuda_ops
 * whose device count answers RT_ENOTBUILT "cuda: not built (...)". Nothing
 * else can be reached, since every other call needs an opened device
 * (except proc_mem and telemetry, where a backend's management library is
 * dlopen'ed anyway).
 * Included only by the dev_*_stub.c files CMake picks for unbuilt backends.
 */
#ifndef RT_DEV_STUB_H
#define RT_DEV_STUB_H

#include "runner/device/dev.h"

#define DEV_STUB_OPS(NAME, HOW) DEV_STUB_OPS_MEM(NAME, HOW, NULL, NULL)

/* The same with proc_mem and telemetry ops that need nothing built (cuda:
 * NVML; hip: amdsmi), since they dlopen their management library. */
#define DEV_STUB_OPS_MEM(NAME, HOW, MEM, TEL)                                        \
	static int stub_count(int *n, struct rt_sb *err)                             \
	{                                                                            \
		*n = 0;                                                              \
		return rt_errf(err, RT_ENOTBUILT, #NAME ": not built (%s)", HOW);    \
	}                                                                            \
	const struct dev_ops dev_##NAME##_ops = {                                    \
		.name = #NAME,                                                       \
		.built = false,                                                      \
		.count = stub_count,                                                 \
		.proc_mem = MEM,                                                     \
		.telemetry = TEL,                                                    \
	};

#endif

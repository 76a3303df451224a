/*
 * Element types of kernel buffers (see bench_kernel.h): sizes, and reading
 * and writing one element as a double, with round-to-nearest-even
 * conversions to and from fp16 and bf16.
 */
#include "runner/bench/bench_kernel.h"

#include <math.h>
#include <string.h>

size_t run_bkernel_dtype_size(enum spec_dtype t)
{
	switch (t) {
	case SPEC_DT_F16:
	case SPEC_DT_BF16:
		return 2;
	case SPEC_DT_F64:
	case SPEC_DT_I64:
		return 8;
	case SPEC_DT_U8:
		return 1;
	case SPEC_DT_F32:
	case SPEC_DT_I32:
		break;
	}
	return 4;
}

bool run_bkernel_dtype_float(enum spec_dtype t)
{
	return t == SPEC_DT_F32 || t == SPEC_DT_F16 || t == SPEC_DT_BF16 || t == SPEC_DT_F64;
}

static uint16_t f32_to_f16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
	if (exp == 0xff)
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
	int e = (int)exp - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) {
		if (e < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		int shift = 14 - e;
		uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	uint32_t h = sign | ((uint32_t)e << 10) | (man >> 13);
	uint32_t rem = man & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;
	return (uint16_t)h;
}

static float f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, x;
	if (exp == 0) {
		float v = ldexpf((float)man, -24);
		return sign ? -v : v;
	}
	if (exp == 31)
		x = sign | 0x7f800000 | (man << 13);
	else
		x = sign | ((exp - 15 + 127) << 23) | (man << 13);
	float f;
	memcpy(&f, &x, 4);
	return f;
}

static uint16_t f32_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

static float bf16_to_f32(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;
	memcpy(&f, &x, 4);
	return f;
}

double run_bkernel_elem_get(const void *p, enum spec_dtype t, size_t i)
{
	const unsigned char *b = (const unsigned char *)p + i * run_bkernel_dtype_size(t);
	switch (t) {
	case SPEC_DT_F32: { float v; memcpy(&v, b, 4); return v; }
	case SPEC_DT_F64: { double v; memcpy(&v, b, 8); return v; }
	case SPEC_DT_F16: { uint16_t v; memcpy(&v, b, 2); return f16_to_f32(v); }
	case SPEC_DT_BF16: { uint16_t v; memcpy(&v, b, 2); return bf16_to_f32(v); }
	case SPEC_DT_I32: { int32_t v; memcpy(&v, b, 4); return v; }
	case SPEC_DT_I64: { int64_t v; memcpy(&v, b, 8); return (double)v; }
	case SPEC_DT_U8: return *b;
	}
	return 0;
}

void run_bkernel_elem_set(void *p, enum spec_dtype t, size_t i, double v)
{
	unsigned char *b = (unsigned char *)p + i * run_bkernel_dtype_size(t);
	switch (t) {
	case SPEC_DT_F32: { float x = (float)v; memcpy(b, &x, 4); break; }
	case SPEC_DT_F64: memcpy(b, &v, 8); break;
	case SPEC_DT_F16: { uint16_t x = f32_to_f16((float)v); memcpy(b, &x, 2); break; }
	case SPEC_DT_BF16: { uint16_t x = f32_to_bf16((float)v); memcpy(b, &x, 2); break; }
	case SPEC_DT_I32: { int32_t x = (int32_t)v; memcpy(b, &x, 4); break; }
	case SPEC_DT_I64: { int64_t x = (int64_t)v; memcpy(b, &x, 8); break; }
	case SPEC_DT_U8: *b = (unsigned char)v; break;
	}
}

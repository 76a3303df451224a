/*
 * Numbers and durations as ratchet reads them everywhere: the spec loader,
 * `ratchet bench load` and the load generator. A number is a plain decimal
 * ([+-]digits[.digits][e[+-]digits], the YAML 1.2 core schema's int and
 * float forms): no hex, no inf, no nan. A duration is a number and a unit:
 * ns, us, ms, s, m or min, h; a bare number is seconds.
 */
#include "runner/base/rt.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Length of the decimal number at the start of s, 0 if none. */
static size_t decimal_len(const char *s)
{
	const char *p = s;
	bool digits = false;
	if (*p == '+' || *p == '-')
		p++;
	for (; isdigit((unsigned char)*p); p++)
		digits = true;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			digits = true;
	if (!digits)
		return 0;
	if (*p == 'e' || *p == 'E') {
		const char *e = p + 1;
		if (*e == '+' || *e == '-')
			e++;
		if (isdigit((unsigned char)*e)) {
			while (isdigit((unsigned char)*e))
				e++;
			p = e;
		}
	}
	return (size_t)(p - s);
}

/* The first len bytes of s as a finite double. */
static int read_decimal(const char *s, size_t len, double *out)
{
	char *num = xstrndup(s, len);
	errno = 0;
	double v = strtod(num, NULL);
	int bad = errno || !isfinite(v);
	free(num);
	if (bad)
		return RT_EINVAL;
	*out = v;
	return 0;
}

int rt_parse_number(const char *s, double *out)
{
	size_t len = s ? decimal_len(s) : 0;
	if (!len || s[len])
		return RT_EINVAL;
	return read_decimal(s, len, out);
}

int rt_split_unit(const char *s, double *v, const char **unit)
{
	if (!s)
		return RT_EINVAL;
	while (isspace((unsigned char)*s))
		s++;
	size_t len = decimal_len(s);
	if (!len || read_decimal(s, len, v))
		return RT_EINVAL;
	const char *u = s + len;
	while (isspace((unsigned char)*u))
		u++;
	*unit = u;
	return 0;
}

int rt_parse_duration(const char *s, double *out)
{
	static const struct {
		const char *unit; /* suffix as written */
		double mul;       /* seconds per unit */
	} units[] = { { "", 1 },	 { "s", 1 },   { "ms", 1e-3 }, { "us", 1e-6 },
		      { "ns", 1e-9 }, { "m", 60 },  { "min", 60 },  { "h", 3600 } };
	double v;
	const char *u;
	if (rt_split_unit(s, &v, &u))
		return RT_EINVAL;
	for (size_t i = 0; i < RT_ARRAY_SIZE(units); i++)
		if (!strcmp(u, units[i].unit)) {
			*out = v * units[i].mul;
			return 0;
		}
	return RT_EINVAL;
}

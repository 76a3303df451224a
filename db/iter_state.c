/* The names of iteration states and roles (db.h's X-macro lists): the one
 * place that maps the enums to the words stored in iterations.state and
 * iterations.role. */
#include <string.h>

#include "db/db.h"

static const char *const state_names[] = {
#define XX(code, name) name,
	DB_ITER_STATE_MAP(XX)
#undef XX
};

static const char *const role_names[] = {
#define XX(code, name) name,
	DB_ITER_ROLE_MAP(XX)
#undef XX
};

const char *db_iter_state_name(enum db_iter_state s)
{
	return (unsigned)s < DB_ITER_N_STATES ? state_names[s] : "unknown";
}

int db_iter_state_parse(const char *name, enum db_iter_state *out)
{
	for (unsigned i = 0; name && i < DB_ITER_N_STATES; i++)
		if (!strcmp(state_names[i], name)) {
			*out = (enum db_iter_state)i;
			return 0;
		}
	return RT_EINVAL;
}

bool db_iter_state_final(enum db_iter_state s)
{
	return s >= DB_ITER_BASELINE && s < DB_ITER_N_STATES;
}

const char *db_iter_role_name(enum db_iter_role r)
{
	return (unsigned)r < DB_N_ROLES ? role_names[r] : "unknown";
}

int db_iter_role_parse(const char *name, enum db_iter_role *out)
{
	for (unsigned i = 0; name && i < DB_N_ROLES; i++)
		if (!strcmp(role_names[i], name)) {
			*out = (enum db_iter_role)i;
			return 0;
		}
	return RT_EINVAL;
}

/*
 * The restriction language of agents/space.h: a recursive-descent parser
 * into a small tree, and its evaluator over one point's values.
 *
 * Depth is bounded (issue 22, item 15): 40,000 nested parentheses, 100k
 * unary minuses or a 200k-term chain overflowed the stack of the parser,
 * the evaluator or the free. The tree is at most EXPR_MAX_DEPTH levels
 * deep, and the parser stops descending there, with an error naming the
 * column; so every recursion over a tree is bounded too.
 */
#include "agents/space.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Levels of nesting (parentheses, operators, a chain's terms) one
 * restriction may have. */
#define EXPR_MAX_DEPTH 256
#define EXPR_TOO_DEEP "the expression nests too deeply (more than 256 levels of parentheses, operators or terms)"

enum op {
	OP_NUM, OP_STR, OP_VAR, OP_NEG, OP_NOT, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FDIV, OP_MOD,
	OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE, OP_AND, OP_OR,
};

struct agent_expr {
	enum op op;             /* what this node does */
	double num;             /* OP_NUM */
	char *str;              /* OP_STR */
	size_t var;             /* OP_VAR: the parameter's index */
	struct agent_expr *a;   /* first operand */
	struct agent_expr *b;   /* second operand */
	unsigned depth;         /* levels of the tree below and including this node */
};

/* Parser state. */
struct ps {
	const char *s;            /* the text */
	size_t i;                 /* next character */
	const char *const *names; /* parameter names */
	size_t n;                 /* entries in names */
	struct rt_sb *err;        /* where the first error goes */
	bool failed;              /* an error was reported */
	unsigned nest;            /* how deep the parser has descended */
};

static void fail(struct ps *p, const char *what);

static struct agent_expr *node(struct ps *p, enum op op, struct agent_expr *a, struct agent_expr *b)
{
	struct agent_expr *e = xcalloc(1, sizeof(*e));
	e->op = op;
	e->a = a;
	e->b = b;
	unsigned da = a ? a->depth : 0, db = b ? b->depth : 0;
	e->depth = 1 + (da > db ? da : db);
	if (e->depth > EXPR_MAX_DEPTH) {
		/* Cut the tree here: the caller sees a leaf, and the error stops
		 * the compile (freed without deep recursion). */
		fail(p, EXPR_TOO_DEEP);
		agent_expr_free(a);
		agent_expr_free(b);
		e->a = e->b = NULL;
		e->op = OP_NUM;
		e->depth = 1;
	}
	return e;
}

/* Descend one level (a parenthesis, a unary operator); false, with the
 * error, past EXPR_MAX_DEPTH: the caller must not recurse then. */
static bool descend(struct ps *p)
{
	if (p->nest >= EXPR_MAX_DEPTH) {
		fail(p, EXPR_TOO_DEEP);
		return false;
	}
	p->nest++;
	return true;
}

void agent_expr_free(struct agent_expr *e)
{
	if (!e)
		return;
	agent_expr_free(e->a);
	agent_expr_free(e->b);
	free(e->str);
	free(e);
}

static void fail(struct ps *p, const char *what)
{
	if (!p->failed)
		rt_errf(p->err, RT_EINVAL, "at column %zu: %s", p->i + 1, what);
	p->failed = true;
}

static void skip(struct ps *p)
{
	while (isspace((unsigned char)p->s[p->i]))
		p->i++;
}

/* Consume tok (a word must not run on into an identifier). */
static bool eat(struct ps *p, const char *tok)
{
	skip(p);
	size_t n = strlen(tok);
	if (strncmp(p->s + p->i, tok, n))
		return false;
	if (isalpha((unsigned char)tok[0]) &&
	    (isalnum((unsigned char)p->s[p->i + n]) || p->s[p->i + n] == '_'))
		return false;
	p->i += n;
	return true;
}

static struct agent_expr *p_or(struct ps *p);

static struct agent_expr *p_atom(struct ps *p)
{
	skip(p);
	const char *c = p->s + p->i;
	if (eat(p, "(")) {
		if (!descend(p))
			return node(p, OP_NUM, NULL, NULL);
		struct agent_expr *e = p_or(p);
		p->nest--;
		if (!eat(p, ")"))
			fail(p, "expected ')'");
		return e;
	}
	if (*c == '\'' || *c == '"') {
		const char *end = strchr(c + 1, *c);
		if (!end) {
			fail(p, "unterminated string");
			return node(p, OP_NUM, NULL, NULL);
		}
		struct agent_expr *e = node(p, OP_STR, NULL, NULL);
		e->str = xstrndup(c + 1, (size_t)(end - c - 1));
		p->i += (size_t)(end - c) + 1;
		return e;
	}
	if (isdigit((unsigned char)*c) || *c == '.') {
		char *end;
		struct agent_expr *e = node(p, OP_NUM, NULL, NULL);
		e->num = strtod(c, &end);
		p->i += (size_t)(end - c);
		return e;
	}
	if (isalpha((unsigned char)*c) || *c == '_') {
		size_t len = 0;
		while (isalnum((unsigned char)c[len]) || c[len] == '_')
			len++;
		struct agent_expr *e = node(p, OP_NUM, NULL, NULL);
		if ((len == 4 && !strncmp(c, "true", 4)) || (len == 4 && !strncmp(c, "True", 4))) {
			e->num = 1;
		} else if ((len == 5 && !strncmp(c, "false", 5)) || (len == 5 && !strncmp(c, "False", 5))) {
			e->num = 0;
		} else {
			size_t k = 0;
			while (k < p->n && (strlen(p->names[k]) != len || strncmp(p->names[k], c, len)))
				k++;
			if (k == p->n && !p->failed) {
				struct rt_sb all = RT_SB_INIT;
				for (size_t j = 0; j < p->n; j++)
					rt_sb_addf(&all, "%s%s", j ? ", " : "", p->names[j]);
				rt_errf(p->err, RT_EINVAL, "unknown parameter '%.*s' (parameters: %s)", (int)len, c,
					all.buf);
				rt_sb_release(&all);
				p->failed = true;
			}
			e->op = OP_VAR;
			e->var = k;
		}
		p->i += len;
		return e;
	}
	fail(p, *c ? "expected a number, a name, a string or '('" : "unexpected end of expression");
	return node(p, OP_NUM, NULL, NULL);
}

static struct agent_expr *p_unary(struct ps *p)
{
	if (!eat(p, "-"))
		return p_atom(p);
	if (!descend(p))
		return node(p, OP_NUM, NULL, NULL);
	struct agent_expr *a = p_unary(p);
	p->nest--;
	return node(p, OP_NEG, a, NULL);
}

static struct agent_expr *p_prod(struct ps *p)
{
	struct agent_expr *e = p_unary(p);
	for (;;) {
		enum op op;
		if (eat(p, "*"))
			op = OP_MUL;
		else if (eat(p, "//"))
			op = OP_FDIV;
		else if (eat(p, "/"))
			op = OP_DIV;
		else if (eat(p, "%"))
			op = OP_MOD;
		else
			return e;
		e = node(p, op, e, p_unary(p));
	}
}

static struct agent_expr *p_sum(struct ps *p)
{
	struct agent_expr *e = p_prod(p);
	for (;;) {
		if (eat(p, "+"))
			e = node(p, OP_ADD, e, p_prod(p));
		else if (eat(p, "-"))
			e = node(p, OP_SUB, e, p_prod(p));
		else
			return e;
	}
}

static struct agent_expr *p_cmp(struct ps *p)
{
	static const struct {
		const char *tok;
		enum op op;
	} cmps[] = { { "<=", OP_LE }, { ">=", OP_GE }, { "==", OP_EQ }, { "!=", OP_NE },
		     { "<", OP_LT }, { ">", OP_GT } };
	struct agent_expr *e = p_sum(p);
	for (size_t k = 0; k < RT_ARRAY_SIZE(cmps); k++)
		if (eat(p, cmps[k].tok))
			return node(p, cmps[k].op, e, p_sum(p));
	return e;
}

static struct agent_expr *p_not(struct ps *p)
{
	skip(p);
	bool bang = p->s[p->i] == '!' && p->s[p->i + 1] != '=';
	if (bang)
		p->i++;
	if (!bang && !eat(p, "not"))
		return p_cmp(p);
	if (!descend(p))
		return node(p, OP_NUM, NULL, NULL);
	struct agent_expr *a = p_not(p);
	p->nest--;
	return node(p, OP_NOT, a, NULL);
}

static struct agent_expr *p_and(struct ps *p)
{
	struct agent_expr *e = p_not(p);
	while (eat(p, "&&") || eat(p, "and"))
		e = node(p, OP_AND, e, p_not(p));
	return e;
}

static struct agent_expr *p_or(struct ps *p)
{
	struct agent_expr *e = p_and(p);
	while (eat(p, "||") || eat(p, "or"))
		e = node(p, OP_OR, e, p_and(p));
	return e;
}

struct agent_expr *agent_expr_compile(const char *text, const char *const *names, size_t n,
				      struct rt_sb *err)
{
	struct ps p = { .s = text, .names = names, .n = n, .err = err };
	struct agent_expr *e = p_or(&p);
	skip(&p);
	if (!p.failed && p.s[p.i])
		fail(&p, "unexpected text after the expression");
	if (p.failed) {
		agent_expr_free(e);
		return NULL;
	}
	return e;
}

bool agent_expr_uses(const struct agent_expr *e, size_t i)
{
	if (!e)
		return false;
	return (e->op == OP_VAR && e->var == i) || agent_expr_uses(e->a, i) || agent_expr_uses(e->b, i);
}

/* A value: a number, or a string (str non-NULL). */
struct val {
	double num;      /* the number (a boolean is 0 or 1) */
	const char *str; /* the string, or NULL for a number */
};

static struct val eval(const struct agent_expr *e, json_t *const *vals)
{
	struct val r = { NAN, NULL }, a = { 0, NULL }, b = { 0, NULL };
	if (e->op == OP_NUM)
		return (struct val){ e->num, NULL };
	if (e->op == OP_STR)
		return (struct val){ NAN, e->str };
	if (e->op == OP_VAR) {
		json_t *v = vals[e->var];
		if (json_is_string(v))
			return (struct val){ NAN, json_string_value(v) };
		if (json_is_boolean(v))
			return (struct val){ json_is_true(v) ? 1 : 0, NULL };
		return (struct val){ json_number_value(v), NULL };
	}
	a = eval(e->a, vals);
	if (e->b)
		b = eval(e->b, vals);
	if ((e->op == OP_EQ || e->op == OP_NE) && (a.str || b.str)) {
		bool eq = a.str && b.str && !strcmp(a.str, b.str);
		return (struct val){ (e->op == OP_EQ) == eq, NULL };
	}
	if (a.str || b.str)
		return r; /* NAN: false */
	switch (e->op) {
	case OP_NEG: r.num = -a.num; break;
	case OP_NOT: r.num = a.num == 0; break;
	case OP_ADD: r.num = a.num + b.num; break;
	case OP_SUB: r.num = a.num - b.num; break;
	case OP_MUL: r.num = a.num * b.num; break;
	case OP_DIV: r.num = b.num != 0 ? a.num / b.num : NAN; break;
	case OP_FDIV: r.num = b.num != 0 ? floor(a.num / b.num) : NAN; break;
	case OP_MOD: r.num = b.num != 0 ? fmod(a.num, b.num) : NAN; break;
	case OP_LT: r.num = a.num < b.num; break;
	case OP_LE: r.num = a.num <= b.num; break;
	case OP_GT: r.num = a.num > b.num; break;
	case OP_GE: r.num = a.num >= b.num; break;
	case OP_EQ: r.num = a.num == b.num; break;
	case OP_NE: r.num = a.num != b.num; break;
	case OP_AND: r.num = a.num != 0 && !isnan(a.num) && b.num != 0 && !isnan(b.num); break;
	case OP_OR: r.num = (a.num != 0 && !isnan(a.num)) || (b.num != 0 && !isnan(b.num)); break;
	default: break;
	}
	return r;
}

bool agent_expr_true(const struct agent_expr *e, json_t *const *vals)
{
	struct val v = eval(e, vals);
	return !v.str && !isnan(v.num) && v.num != 0;
}

/*
 * rep_mkfixture DB [md|html OUT]: create DB from the report fixture, and
 * optionally write its journal. Used by tests/reports/chromium.sh to get a
 * database, and by hand to look at the fixture's report.
 */
#include "reports/rep.h"
#include "rep_fixture.h"

#include <string.h>

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: rep_mkfixture DB [md|html OUT]\n");
		return 2;
	}
	remove(argv[1]);
	struct db *db = rep_fixture_open(argv[1]);
	if (!db)
		return 3;
	int rc = 0;
	if (argc == 4) {
		struct rt_sb out = RT_SB_INIT, err = RT_SB_INIT;
		rc = rep_report(db, 0, strcmp(argv[2], "html") ? REP_MD : REP_HTML, &out, &err);
		if (!rc)
			rc = rt_write_file_atomic(argv[3], out.buf, out.len, 0644, &err);
		if (rc)
			fprintf(stderr, "rep_mkfixture: %s\n", err.buf);
		rt_sb_release(&out);
		rt_sb_release(&err);
	}
	db_close(db);
	return rc ? 3 : 0;
}

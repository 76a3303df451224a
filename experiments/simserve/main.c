/* simserve: placeholder until the simulated serving engine lands. */
#include <stdio.h>

int main(void)
{
	fprintf(stderr, "simserve: not implemented yet\n");
	return 3;
}

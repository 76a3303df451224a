#!/bin/sh
# Prints the GPU convolution search space, one point per line:
# "BX BY TX TY PAD RO" (4,200 points). No restriction is declared: what the
# GPU cannot run (more than 48 KiB of static shared memory, more than 1,024
# threads a block, more registers than an SM has for a block) is found by
# compiling and launching, and recorded as infeasible.
for bx in 16 32 48 64 96 128 256; do for by in 1 2 4 8 16 32; do
for tx in 1 2 3 4 8; do for ty in 1 2 3 4 8; do for pad in 0 1; do for ro in 0 1; do
	echo "$bx $by $tx $ty $pad $ro"
done; done; done; done; done; done

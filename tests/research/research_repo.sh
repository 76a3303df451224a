#!/bin/sh
# `ratchet research`: a local git repository of a "kernel library" with three
# branches, ranked against an imported profile (the Kineto fixture: gemm 50%,
# attention 32%, activation 10%, norm 5%, communication 3%):
#   pr-attn  edits csrc/kernels.cu, a path no op claims, but its changed lines
#            name the profile's flash_fwd_splitkv_kernel: attention, 32%
#   pr-norm  edits csrc/layernorm_kernels.cu: norm by its path, 5%
#   pr-docs  edits docs/README.md: nothing the profile spends time in
# The branch touching the hot kernel ranks first; each is recorded as an
# upstream finding with its diffstat, and with --patch-dir the top one
# becomes a patch variant that `ratchet propose` prints and git applies.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
command -v git >/dev/null || { echo "skipped: git missing"; exit 77; }
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-research
R() { "$RATCHET_BIN" --db r.db "$@"; }

mkdir lib && cd lib
git init -q -b main
git config user.email t@example.com
git config user.name t
mkdir -p csrc docs
cat > csrc/kernels.cu <<'C'
// the library's kernels
template <typename T> __global__ void flash_fwd_splitkv_kernel(T *out, const T *q, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = q[i];
}
C
printf '__global__ void rms_norm_kernel(float *x, int n) { x[0] = n; }\n' > csrc/layernorm_kernels.cu
printf '# the library\n' > docs/README.md
git add -A && git commit -qm base
git checkout -q -b pr-attn
sed -i 's/if (i < n) out\[i\] = q\[i\];/if (i < n) out[i] = q[i] * 2; \/\/ flash_fwd_splitkv_kernel: wider tiles/' csrc/kernels.cu
git commit -qam "attention: wider tiles"
git checkout -q main && git checkout -q -b pr-norm
printf '__global__ void rms_norm_kernel(float *x, int n) { x[0] = 2 * n; }\n' > csrc/layernorm_kernels.cu
git commit -qam "norm: faster"
git checkout -q main && git checkout -q -b pr-docs
printf '# the library\nNow with docs.\nAnd more.\n' > docs/README.md
git commit -qam "docs"
git checkout -q main
cd "$W"

R profile import "$RATCHET_SRC/tests/agents/fixtures/kineto_vllm_decode.json" > import.out 2>&1 ||
	{ cat import.out; echo "FAIL: import"; exit 1; }
R research lib --refs pr-docs,pr-norm,pr-attn --patch-dir patches > refs.out 2> err.txt ||
	{ cat err.txt; echo "FAIL: research exited $?"; exit 1; }
cat refs.out
up() { sqlite3 r.db "SELECT $1 FROM findings WHERE kind = 'upstream' ORDER BY id"; }
order=$(up subject | tr '\n' ' ')
[ "$order" = "pr-attn pr-norm pr-docs " ] && ok "the branch touching the hot kernel ranks first ($order)" ||
	no "order: $order"
share=$(up "printf('%.4f', share)" | head -1)
[ "$share" = 0.3200 ] && ok "pr-attn touches attention's 32%" || no "pr-attn share $share"
up evidence | head -1 | grep -q 'kernels flash_fwd_splitkv_kernel' && ok "kernel named by a changed line" ||
	no "evidence: $(up evidence | head -1)"
up detail | sed -n 2p | grep -q 'pr-norm touches norm 5.0%$' && ok "pr-norm maps to norm by its path" ||
	no "pr-norm: $(up detail | sed -n 2p)"
[ "$(up "printf('%.4f', share)" | sed -n 3p)" = 0.0000 ] && ok "pr-docs touches nothing hot" || no "pr-docs share"
up evidence | head -1 | grep -q '^1 file, +1 -1: csrc/kernels.cu (+1 -1)' &&
	ok "diffstat recorded" || no "diffstat: $(up evidence | head -1)"
grep -q '^  1 .*pr-attn' refs.out && ok "printed ranked" || no "printed ranking"

n=$(sqlite3 r.db "SELECT count(*) FROM findings WHERE kind = 'upstream'")
[ "$n" = 3 ] && ok "three upstream findings" || no "upstream findings: $n"
R findings --top 0 > findings.out
grep -A1 ' upstream ' findings.out | head -1 | grep -q 'pr-attn touches attention' &&
	ok "findings rank pr-attn first among upstream refs" || { cat findings.out; no "findings order"; }
R propose > propose.out || true
grep -q 'name: upstream-pr-attn' propose.out && grep -q 'patch:' propose.out &&
	ok "propose turns the top ref into a patch variant" || { cat propose.out; no "propose"; }
git -C lib apply --check "$W/patches/upstream-pr-attn.diff" && ok "the patch applies to main" ||
	no "patch does not apply"

rc=0
R research lib --refs no-such-ref > bad.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "no-such-ref" bad.out && ok "a bad ref is a usage error naming it" ||
	{ cat bad.out; no "bad ref exit $rc"; }
finish

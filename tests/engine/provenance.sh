#!/bin/sh
# Each launch's provenance, end to end, with a stand-in `docker` first on
# the engine's PATH (a script: `run ... IMAGE ...` execs simserve, `image
# inspect` prints a digest, or fails when NO_INSPECT exists): the image
# reference and its digest are recorded, or the reference alone with the
# reason; the workdir's git HEAD and dirty state; the output of
# engine.provenance with secrets redacted. When that output changes between
# launches (a package upgraded mid-campaign), the launch is flagged on the
# run's output and by `show`.
set -eu
. "${RATCHET_SRC:?}/tests/lib/provenance.sh"
prov_workdir ratchet-prov
command -v git >/dev/null || { echo "git missing"; exit 1; }
mkdir bin
cat > bin/docker <<S
#!/bin/sh
if [ "\$1" = image ]; then
	[ -e "$W/NO_INSPECT" ] && { echo "Error: No such image" >&2; exit 1; }
	echo "vllm/vllm-openai@sha256:0123456789abcdef"; exit 0
fi
shift; while [ "\$1" != vllm/vllm-openai:v0.8.5 ]; do shift; done; shift
exec "$RATCHET_BUILD/simserve" "\$@"
S
chmod +x bin/docker
# pkgs.txt is what `pip freeze` would say; the benchmark bumps it after its 3rd run
echo "torch==2.5.1" > pkgs.txt
git init -q . && git -c user.email=t@t -c user.name=t commit -q --allow-empty -m base
prov_spec provenance '  command: [docker, run, --rm, -p, "{port}:{port}", --gpus, all, vllm/vllm-openai:v0.8.5,
            --port, "{port}", --model, served]
  env: {PATH: "'"$W"'/bin:/usr/bin:/bin"}
  provenance: [sh, -c, "cat {workdir}/pkgs.txt; echo HF_TOKEN=hf_abcdefghijklmnopqrstuv"]' \
	'[ $n -lt 2 ] || echo torch==2.6.0 > pkgs.txt'
"$RATCHET_BIN" check spec.yaml > /dev/null
run_ok spec.yaml
q "SELECT id, arm, image_ref, image_digest, differs FROM launches"
n=$(q "SELECT count(*) FROM launches WHERE image_ref = 'vllm/vllm-openai:v0.8.5' AND image_digest = 'vllm/vllm-openai@sha256:0123456789abcdef'")
[ "$n" -ge 4 ] || { echo "FAIL: image and digest not recorded ($n)"; exit 1; }
sha=$(sha256sum bin/docker | cut -d' ' -f1)
n=$(q "SELECT count(*) FROM launches WHERE exe_path = '$W/bin/docker' AND exe_sha256 = '$sha'")
[ "$n" -ge 4 ] || { echo "FAIL: the executable on the engine's PATH not recorded ($n)"; exit 1; }
head=$(git rev-parse HEAD)
q "SELECT repos FROM launches LIMIT 1" | grep -q "\"head\":\"$head\"" || { echo "FAIL: the workdir's HEAD not recorded"; exit 1; }
q "SELECT repos FROM launches LIMIT 1" | grep -q '"dirty":false' || { echo "FAIL: dirty state not recorded"; exit 1; }
q "SELECT extra FROM launches LIMIT 1" | grep -q "torch==2.5.1" || { echo "FAIL: provenance output not recorded"; exit 1; }
if q "SELECT extra FROM launches" | grep -q hf_abcdefghijklmnopqrstuv; then echo "FAIL: a secret was stored"; exit 1; fi
# the first launches agree with the first; those after the bump are flagged
prov_first_agree
n=$(q "SELECT count(*) FROM launches WHERE differs LIKE '%provenance output%torch==2.6.0%'")
[ "$n" -ge 1 ] || { echo "FAIL: the changed package set is not flagged"; exit 1; }
grep -q "differs from the campaign's first" run.out || { cat run.out; echo "FAIL: the run did not say so"; exit 1; }
prov_show_flagged --full
grep -q "DIFFERS from the campaign's first launch" show.out || { cat show.out; echo "FAIL: show does not flag it"; exit 1; }
grep -q "image digest *vllm/vllm-openai@sha256:0123456789abcdef" show.out || { echo "FAIL: show has no digest"; exit 1; }
# no `image inspect`: the reference alone, and why
touch NO_INSPECT
rm c.db
run_ok spec.yaml
n=$(q "SELECT count(*) FROM launches WHERE image_ref IS NOT NULL AND image_digest IS NULL AND note LIKE '%image digest not recorded, the reference only%'")
[ "$n" -ge 1 ] || { q "SELECT note FROM launches"; echo "FAIL: a missing digest is not said"; exit 1; }
echo PASS

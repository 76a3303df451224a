# Sourced by the patch variants' shell tests (patch.sh, patch_paths.sh):
#   patch_spec NAME BUILT  writes spec.yaml: campaign NAME, one benchmark
#                          whose gflops is the number in the file BUILT,
#                          and the variants read from stdin (YAML list items)
patch_spec() {
	{
		cat <<Y
name: $1
benchmarks:
  - name: app
    command: [sh, -c, "printf '{\"gflops\": %s}' \$(cat $2)"]
    metrics: {gflops: /gflops}
objective: {metric: app.gflops, goal: max, min_gain: 5%}
repeats: {min: 3, max: 3}
variants:
Y
		cat
	} > spec.yaml
}

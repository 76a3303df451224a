# Sourced by the patch variants' shell tests (patch.sh, patch_paths.sh):
#   patch_spec NAME BUILT  writes spec.yaml: campaign NAME, one benchmark
#                          whose gflops is the number in the file BUILT,
#                          and the variants read from stdin (YAML list items)
#   patch_repo             a git repository src/ whose speed.txt and built.txt
#                          hold 100, and faster.diff (speed.txt 100 -> 130)
patch_repo() {
	mkdir src
	(
		cd src
		git init -q
		echo 100 > speed.txt
		cp speed.txt built.txt
		git add .
		git -c user.email=t@example.com -c user.name=t commit -qm init
		echo 130 > speed.txt && git diff > ../faster.diff && git checkout -q speed.txt
	)
}
patch_spec() {
	{
		cat <<Y
name: $1
benchmarks:
  - name: app
    command: [sh, -c, "printf '{\"gflops\": %s}' \$(cat $2)"]
    metrics: {gflops: {pointer: /gflops, better: higher}}
objective: {metric: app.gflops, goal: max, min_gain: 5%}
repeats: {min: 3, max: 3}
variants:
Y
		cat
	} > spec.yaml
}

# Sourced by the Slurm tests: a real single-node Slurm cluster from Debian's
# packages (slurm-wlm, munge), started in a folder of its own and stopped at
# exit. Issue 14 asks for a real cluster, not a stand-in:
#   slurm_up DIR     installs the packages when missing (root and apt only;
#                    otherwise exit 77, skipped), starts munged if none runs,
#                    writes DIR/slurm.conf and DIR/gres.conf, starts slurmctld
#                    and slurmd on free ports, waits for the node to be idle,
#                    and exports SLURM_CONF. Four fake GPUs: GRES gpu:4 backed
#                    by character devices made with mknod in DIR/dev (Slurm
#                    then sets CUDA_VISIBLE_DEVICES in each step, as on a GPU
#                    node).
#   slurm_down       stops both daemons (registered with trap by slurm_up).
# Followed: Slurm 22.05 (Debian 12's slurm-wlm 22.05.8), slurm.conf(5) and
# gres.conf(5). Accounting is off (no slurmdbd): sacct answers "accounting
# storage is disabled", so a job's state and reason come from scontrol.
slurm_down() {
	[ -n "${SLURM_CONF:-}" ] || return 0
	jobs=$(squeue -h -o %i 2>/dev/null || true)
	[ -z "$jobs" ] || scancel $jobs 2>/dev/null || true
	i=0
	while [ -n "$(squeue -h -o %i 2>/dev/null)" ] && [ $i -lt 50 ]; do i=$((i + 1)); sleep 0.1; done
	scontrol shutdown >/dev/null 2>&1 || true
	pids=
	for p in "$SLURM_DIR/run/slurmd.pid" "$SLURM_DIR/run/slurmctld.pid"; do
		[ -f "$p" ] && pids="$pids $(cat "$p")" && kill "$(cat "$p")" 2>/dev/null || true
	done
	# slurmctld writes its state files as it stops: wait for both daemons
	# to be gone before the caller removes their folder (up to 5 s)
	i=0
	for p in $pids; do
		while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do i=$((i + 1)); sleep 0.1; done
	done
	# a batch script's slurmstepd outlives slurmd: stop the ones of this cluster
	for d in /proc/[0-9]*; do
		grep -qs "$SLURM_DIR/spool" "$d/cmdline" "$d/environ" 2>/dev/null && kill "${d#/proc/}" 2>/dev/null || true
	done
}
slurm_skip() { echo "SKIP: $*"; exit 77; }
slurm_up() {
	SLURM_DIR=$1
	if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
		[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || slurm_skip "slurm-wlm and munge are not installed (apt-get install slurm-wlm munge)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null 2>&1 ||
			slurm_skip "apt-get install slurm-wlm munge failed"
	fi
	[ "$(id -u)" = 0 ] || slurm_skip "a test cluster needs root (slurmd runs steps as their user)"
	mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool" "$SLURM_DIR/log" "$SLURM_DIR/run" "$SLURM_DIR/dev"
	if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
		[ -f /etc/munge/munge.key ] || /usr/sbin/mungekey -c 2>/dev/null || create-munge-key -f >/dev/null 2>&1 || true
		mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
		runuser -u munge -- /usr/sbin/munged 2>/dev/null || /usr/sbin/munged --force || slurm_skip "munged does not start"
		sleep 0.3
		munge -n | unmunge >/dev/null 2>&1 || slurm_skip "munge does not answer"
	fi
	for i in 0 1 2 3; do
		mknod "$SLURM_DIR/dev/gpu$i" c 1 3 2>/dev/null || slurm_skip "mknod is not allowed here (fake GPU devices)"
	done
	h=$(hostname)
	base=$(( 20000 + ($$ % 2000) * 2 ))
	cat > "$SLURM_DIR/slurm.conf" <<CONF
ClusterName=ratchettest
SlurmctldHost=$h
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/run/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/run/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
ReturnToService=2
MinJobAge=3600
NodeName=$h CPUs=$(nproc) RealMemory=1000 Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=$h Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
	echo "NodeName=$h Name=gpu Count=4 File=$SLURM_DIR/dev/gpu[0-3]" > "$SLURM_DIR/gres.conf"
	export SLURM_CONF="$SLURM_DIR/slurm.conf"
	trap slurm_down EXIT
	slurmctld || slurm_skip "slurmctld does not start: $(tail -3 "$SLURM_DIR/log/slurmctld.log")"
	slurmd || slurm_skip "slurmd does not start: $(tail -3 "$SLURM_DIR/log/slurmd.log")"
	i=0
	until sinfo -h -N -o %t 2>/dev/null | grep -qx idle; do
		i=$((i + 1))
		[ $i -lt 100 ] || { tail -5 "$SLURM_DIR/log/slurmctld.log" "$SLURM_DIR/log/slurmd.log"; echo "FAIL: the node never became idle"; exit 1; }
		sleep 0.1
	done
}

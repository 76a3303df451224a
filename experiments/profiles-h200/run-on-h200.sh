#!/bin/bash
# On the H200 (the device tool's nvidia-h200), no build needed:
#   run: command "bash experiments/profiles-h200/run-on-h200.sh"
# Captures the PyTorch profiler traces (capture.py), trims them (trim.py),
# and profiles a handful of kernels with Nsight Compute (ncu_kernels.py),
# exporting CSV three ways: the details page and the raw page of a saved
# report (ncu --import ... --csv), and ncu --csv on stdout as a user pipes
# it. Everything comes back in $OUT: trim.tar.gz (the fixtures), raw.tar.gz
# (the untrimmed traces), and the logs.
set -u
export PYTHONUNBUFFERED=1
PY=/opt/torch/.venv/bin/python3
[ -x $PY ] || PY=python3
NCU=/usr/local/cuda/bin/ncu
D=$(dirname "$0")
W=/tmp/prof
OUT=${OUT:-/tmp/prof-out}
rm -rf $W && mkdir -p $W/trim $OUT
t0=$(date +%s)
{
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	$PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
	$NCU --version
	uname -r
} > $W/versions.txt 2>&1
cat $W/versions.txt
timeout 240 $PY $D/capture.py $W 2>&1 | tee $W/capture.log
echo "capture: $(( $(date +%s) - t0 )) s"
$PY $D/trim.py $W/raw $W/trim 300000 2>&1 | tee $W/trim.log
cp $W/raw/*.txt $W/trim/ 2>/dev/null
M=gpu__time_duration.sum,dram__bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size
NCMD="$NCU --profile-from-start off --clock-control none --set basic --metrics $M -c 16 -f -o $W/ncu $PY $D/ncu_kernels.py"
echo "$NCMD" > $W/ncu.log
timeout 100 $NCMD >> $W/ncu.log 2>&1
echo "ncu exit $?" >> $W/ncu.log
$NCU --import $W/ncu.ncu-rep --csv --page details > $W/trim/ncu_details.csv 2>> $W/ncu.log
$NCU --import $W/ncu.ncu-rep --csv --page raw > $W/trim/ncu_raw.csv 2>> $W/ncu.log
SCMD="$NCU --csv --profile-from-start off --clock-control none --metrics gpu__time_duration.sum -c 16 $PY $D/ncu_kernels.py"
echo "$SCMD" >> $W/ncu.log
timeout 60 $SCMD > $W/trim/ncu_stdout.csv 2>> $W/ncu.log
echo "ncu stdout exit $?" >> $W/ncu.log
tail -20 $W/ncu.log
head -5 $W/trim/ncu_details.csv
ls -l $W/trim
cp $W/versions.txt $W/capture.log $W/trim.log $W/ncu.log $W/trim/
tar czf $OUT/trim.tar.gz -C $W trim
tar czf $OUT/raw.tar.gz -C $W raw
ls -l $OUT
echo "total: $(( $(date +%s) - t0 )) s"

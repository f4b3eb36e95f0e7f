#!/usr/bin/env bash
# A poolgrad fuzz campaign as a Slurm job array: task I of N runs shard I/N (same seed, so the
# shards split one case sequence per variant without overlap), each on one GPU and its cores.
#   sbatch --array=0-7 fuzz/schedulers/slurm_campaign.sh      # 8 shards
#   build/src/poolgrad fuzz-merge campaign-*/report-*.json --out campaign.json   # when all are done
#SBATCH --job-name=poolgrad-fuzz
#SBATCH --gpus=1
#SBATCH --cpus-per-task=16
#SBATCH --time=01:10:00
#SBATCH --output=campaign-%A/shard-%a.log
set -euo pipefail
seed=${SEED:-20261123}
dir=campaign-${SLURM_ARRAY_JOB_ID}
mkdir -p "$dir"
# Exit status 1 (a case failed) still leaves the report and case files; the merge says what failed.
build/src/poolgrad fuzz --minutes "${MINUTES:-60}" --seed "$seed" --jobs "$SLURM_CPUS_PER_TASK" \
  --shard "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" --corpus "$dir/cases" \
  --report "$dir/report-$SLURM_ARRAY_TASK_ID.json" || [ $? -eq 1 ]

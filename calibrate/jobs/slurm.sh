#!/bin/bash
# The calibration job (calibrate/run_on_gpu.sh) on one GPU of a Slurm cluster; OUT lands in the submit folder.
#   sbatch calibrate/jobs/slurm.sh                       (from the repository root; edit the paths below first)
# DEEPGEMM and FLASHMLA: checkouts at the commits calibrate/README.md names (DeepGEMM 55ab91f, FlashMLA 9241ae3,
# submodules included), on a file system the node sees. A re-submission resumes: finished stages are kept in OUT.
#SBATCH --job-name=dbosim-calibrate
#SBATCH --gpus=1
#SBATCH --exclusive
#SBATCH --cpus-per-task=16
#SBATCH --time=00:40:00
#SBATCH --output=dbosim-calibrate-%j.log
set -euo pipefail
DEEPGEMM=${DEEPGEMM:-$HOME/src/DeepGEMM}
FLASHMLA=${FLASHMLA:-$HOME/src/FlashMLA}
OUT=${OUT:-$SLURM_SUBMIT_DIR/calib-out}
cd "$SLURM_SUBMIT_DIR"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
calibrate/run_on_gpu.sh "$OUT" --deepgemm "$DEEPGEMM" --flashmla "$FLASHMLA"
tar -czf "$OUT.tar.gz" --exclude scratch -C "$(dirname "$OUT")" "$(basename "$OUT")"
echo "collected $OUT.tar.gz; then: build-dev/dbosim-calibrate fit $OUT --out NEW.yaml"

#!/bin/bash
# times each dpnotes command 3 times: wall and user+sys
cd "$(dirname "$0")/.." && source .venv/bin/activate
run() { label="$1"; shift; for i in 1 2 3; do /usr/bin/time -f "%e %U %S" "$@" >/dev/null 2>>/tmp/t_$$; done; echo "$label | $(awk '{w=$1; c=$2+$3; printf "%.2f/%.2f ", w, c}' /tmp/t_$$)"; rm -f /tmp/t_$$; }
uptime
run "--help" dpnotes --help
run "epsilon --help" dpnotes epsilon --help
run "rdp row2" dpnotes epsilon --batch-size 256 --dataset-size 60000 --epochs 60 --noise-multiplier 1.1 --delta 1e-5 --accountant rdp
for row in "1.3 15" "1.1 60" "0.7 45" "0.6 62" "0.55 68" "0.5 100"; do set -- $row
run "all sigma $1 epochs $2" dpnotes epsilon --batch-size 256 --dataset-size 60000 --epochs $2 --noise-multiplier $1 --delta 1e-5
done
uptime

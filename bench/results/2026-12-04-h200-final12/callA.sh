#!/usr/bin/env bash
# final12 call A (from 30d042a): suite, blocks, attention users, FA3 against SDPA (time, verify,
# sanitize), a GEMM tile A/B on Falcon-7B's block. From the repository root, dist/ carried.
export PATH="$PATH:/usr/local/cuda/bin" TX_PYTHON=$(command -v python3)
echo "== commit $(cat dist/COMMIT)"; date -u
bash bench/final.sh 250 suite block attn_users 2>&1 | tail -70
OUT=$OUT/fa3 STEPS=time,verify,sanitize,time2 BUDGET=190 timeout 215 bash bench/fa3_check.sh > $OUT/fa3.log 2>&1
sed -n '/fa3_check summary/,$p' $OUT/fa3/summary.txt | head -60
for t in "" 128x256; do
  TX_WG_TILE=$t timeout 60 dist/bin/txc bench bench/heldout/falcon7b_block.tx -D B=2 -D S=2048 -D F=18176 \
    --device=gpu --random-inputs=1 --iters 5 2>&1 | grep -E 'verified|FAIL|  graph|falcon7b_block_k[15-7] '
done

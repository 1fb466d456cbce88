#!/bin/bash
# rounds: 1w alone (pinned cpu0), 1w + spin on cpu1, 2w (both cpus)
out=$1; rounds=${2:-6}
for r in $(seq $rounds); do
  echo "# round $r load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out
  flock /tmp/bench.lock sh -c '
    echo "# case=alone" ; taskset -c 0 /tmp/fj.test -test.run XXX -test.bench "Spawn$/impl=(Spawn|SpawnTask)$" -test.benchtime 20x -test.cpu 1 | sed "s/^BenchmarkSpawn/BenchmarkSpawn\/case=alone/" | grep "^Bench"
    taskset -c 1 /tmp/spin/spin & sp=$!
    sleep 0.2
    echo "# case=spin"; taskset -c 0 /tmp/fj.test -test.run XXX -test.bench "Spawn$/impl=(Spawn|SpawnTask)$" -test.benchtime 20x -test.cpu 1 | sed "s/^BenchmarkSpawn/BenchmarkSpawn\/case=spin/" | grep "^Bench"
    kill $sp; wait $sp 2>/dev/null
    /tmp/fj.test -test.run XXX -test.bench "Spawn$/impl=(Spawn|SpawnTask)$" -test.benchtime 20x -test.cpu 2 | sed "s/^BenchmarkSpawn/BenchmarkSpawn\/case=twoworkers/; s/-2 / /" | grep "^Bench"
  ' >> $out
done

#!/bin/bash
# interleaved rounds: old (main cf0de4e) vs new (batch), one GOMAXPROCS per process
cd /tmp/sb
for r in 1 2 3 4 5 6; do
  for c in 2 1; do
    for b in old new; do
      echo "# round $r cpu $c $b load $(cut -d' ' -f1 /proc/loadavg)" >> $b.cpu$c.txt
      flock /tmp/bench.lock ./$b.test -test.run XXX -test.bench 'Submit1M|SubmitDrain' -test.benchtime 1000000x -test.count 1 -test.cpu $c >> $b.cpu$c.txt 2>&1
    done
  done
done
echo done > /tmp/sb/finished

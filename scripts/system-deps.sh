#!/usr/bin/env bash
# Debian packages the workbench needs: a JDK (javac builds the UDF jar), Maven (fetches
# jars) and Node.js (pip's build hook compiles the JupyterLab extension with jlpm). With the
# argument `test`, also the time-series servers the tests run: InfluxDB 1.x and
# VictoriaMetrics, Debian's Chromium (the dashboard and map tests drive it headless through
# Playwright) and PostgreSQL (the job service's database tests start a server).
# Installs only what is missing, so it is quick when everything is there.
set -euo pipefail

case "${1:-}" in
  "" | test) ;;
  *) echo "usage: $0 [test]" >&2; exit 2 ;;
esac

need=()
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || need+=(maven)
command -v node >/dev/null 2>&1 || need+=(nodejs)
if [ "${1:-}" = "test" ]; then
  command -v influxd >/dev/null 2>&1 || need+=(influxdb)
  command -v victoria-metrics >/dev/null 2>&1 || need+=(victoria-metrics)
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
fi
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "installing Debian packages: ${need[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${need[@]}" >/dev/null

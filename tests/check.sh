# Sourced by the CLI test scripts: `check NAME EXPECTED_STATUS PATTERN -- command...` runs the command and
# passes when its exit status and its output (stdout and stderr) match; failures set `fail=1`.
fail=0
check() {
  local name=$1 want=$2 pattern=$3
  shift 4
  local out status
  out=$("$@" 2>&1)
  status=$?
  if [[ $status -ne $want ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: status $status (want $want), output:"
    echo "$out" | tail -30
    fail=1
  else
    echo "ok   $name"
  fi
}

# For the scripts that run cclab under mpirun: `cclab` (absolute), `run` (mpirun with oversubscription,
# allowed as root) and a temporary working directory, entered and removed on exit.
mpi_test_setup() {
  cclab=$(realpath "$1")
  run=("${2:-mpirun}" --oversubscribe --allow-run-as-root)
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  cd "$dir" || exit 1
}

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

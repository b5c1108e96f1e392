# Shared by the client examples' CI entries (examples/go, examples/java,
# examples/typescript run.sh): sourced, not run.
#
# parse_client_args NAME "$@"  reads `--address HOST:PORT --binary PATH` into $address
#                              and $binary (made absolute, from the caller's directory);
#                              prints the usage of examples/NAME/run.sh and exits 2 on
#                              anything else, or if the binary is not an executable.

parse_client_args() {
  local name=$1
  shift
  address='' binary=''
  while [ $# -gt 0 ]; do
    case $1 in
      --address) address=${2:-}; shift 2 || break ;;
      --binary) binary=${2:-}; shift 2 || break ;;
      *) address=''; break ;;
    esac
  done
  if [ -z "$address" ] || [ -z "$binary" ]; then
    echo "usage: bash examples/$name/run.sh --address HOST:PORT --binary PATH/TO/arbiter" >&2
    exit 2
  fi
  if [ ! -x "$binary" ]; then
    echo "$name: $binary is not an executable" >&2
    exit 2
  fi
  binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
}

# Sourced by the differential test scripts (diff-test.sh,
# train-loop-check.sh) after they set NRANKS; reads TARGET and KEEP and
# sets, for the script named $1:
#   TARGET_ARGS  soapc flags of TARGET (cpu, the default; cuda; cuda-emulated:
#                the CUDA lowering with its kernels run on the host over the
#                emulated CUDA libraries); an unknown TARGET exits with 2;
#   WORK         a fresh work folder, removed at exit unless KEEP=1;
#   MPIRUN       mpirun for NRANKS ranks (as root too).
soap_script=$1
case "${TARGET:=cpu}" in
  cpu) TARGET_ARGS=(--target=cpu) ;;
  cuda) TARGET_ARGS=(--target=cuda) ;;
  cuda-emulated) TARGET_ARGS=(--target=cuda --cuda-host-emulation) ;;
  *) echo "$soap_script: unknown TARGET=$TARGET (cpu, cuda or cuda-emulated)"; exit 2 ;;
esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/soap-$soap_script.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  echo "$soap_script: work folder $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi
# Open MPI's session directory in the work folder: concurrent runs (lit's
# workers) sharing /tmp/ompi.* race on creating and removing it
# ("orte_session_dir failed").
MPIRUN=(mpirun -np "$NRANKS" --oversubscribe --mca orte_tmpdir_base "$WORK")
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)

// Sanitizer builds only: dlclose() that keeps the library mapped. Open MPI unloads its MCA components at
// MPI_Finalize, and LeakSanitizer, which checks after that, then sees their allocations as "<unknown module>"
// and cannot tell Open MPI's own leaks at finalize (open-mpi/ompi#12584) from ours. With the components kept
// mapped, every frame has a module name, and tests/lsan-openmpi.supp suppresses Open MPI's libraries by name
// only. Defined in the executable, this dlclose() takes precedence over libc's for every library.
extern "C" int dlclose(void* /*handle*/) {
  return 0;
}

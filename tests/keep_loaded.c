/* Preloaded into every process scripts/sanitize.sh starts: dlclose
 * does nothing, so Open MPI's plugins stay mapped until exit and the frames of
 * the allocations they keep name their module (mca_*.so), which
 * tests/lsan.supp matches. Without it LeakSanitizer sees "<unknown module>"
 * and only a slow (DWARF) unwind at every malloc reaches a frame in libmpi. */
int dlclose(void *handle) {
  (void)handle;
  return 0;
}

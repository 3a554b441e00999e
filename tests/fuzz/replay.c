/*
 * replay.c - runs files through the fuzz target without libFuzzer, so the
 * gcc build replays the seed corpus (and any crash file) as a unit test:
 *   replay FILE_OR_FOLDER...
 * Prints how many inputs ran; a failing input aborts inside the target.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return -1;
  }
  static uint8_t data[1 << 16];
  size_t n = fread(data, 1, sizeof data, f);
  fclose(f);
  LLVMFuzzerTestOneInput(data, n);
  return 1;
}

int main(int argc, char **argv) {
  long ran = 0;
  for (int a = 1; a < argc; a++) {
    struct stat st;
    if (stat(argv[a], &st) != 0) {
      fprintf(stderr, "replay: no %s\n", argv[a]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (run_file(argv[a]) < 0) return 1;
      ran++;
      continue;
    }
    DIR *d = opendir(argv[a]);
    if (!d) return 1;
    for (struct dirent *ent; (ent = readdir(d));) {
      if (ent->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[a], ent->d_name);
      if (run_file(path) < 0) return 1;
      ran++;
    }
    closedir(d);
  }
  printf("replay: %ld inputs passed\n", ran);
  return ran > 0 ? 0 : 1; /* a replay of nothing proves nothing */
}

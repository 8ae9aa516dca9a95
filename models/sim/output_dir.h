// A run's output folder (`fabricsim run --out DIR`): owned by one run while it goes, and given its
// result files as one set.
//
// Not hardware: the results side of a run. Two guarantees, for regression farms that start many
// runs and read their folders while they go:
//   - one run at a time: the run holds an exclusive lock (flock) on `.NAME.lock` beside DIR from
//     before it simulates until its files are in place; a second run into DIR is refused with the
//     pid of the one that holds it;
//   - whole or absent: the run writes its files into a private folder beside DIR (`.NAME.new`, on
//     the same file system) and publish() swaps that folder with DIR in one rename
//     (renameat2 RENAME_EXCHANGE; where the file system lacks it, two renames, so that a reader
//     finds the old set, briefly no folder, then the new set). A reader never sees files of two
//     runs together, and a write that fails part-way (a full disk) leaves the previous set as it
//     was. Anything else in DIR that is not a result file (a sweep's stdout.txt, notes) is moved
//     into the new set's folder before the swap, so it stays in DIR.
#pragma once

#include <cstdint>
#include <string>

namespace fabricsim::sim {

// The names of a run's result files: what publish() replaces; every other entry of the folder is
// kept.
bool is_result_file(const std::string& name);

class OutputDir {
 public:
  // Locks `dir` and makes the private folder. Throws std::runtime_error naming the problem: `dir`
  // empty, not a directory, the current directory or one above it (its contents are replaced
  // as a set), not writable, or in use by another run (with that run's pid).
  explicit OutputDir(const std::string& dir);
  // Unpublished (an error ended the run): removes the private folder; DIR keeps its previous set.
  // Releases the lock.
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  // Where the run writes its files until publish().
  const std::string& staging() const { return staging_; }
  // Bytes free for an unprivileged writer on DIR's file system.
  uint64_t free_bytes() const;
  // Whether DIR held anything when the run started (for messages: "keeps its previous results").
  bool had_previous() const { return had_previous_; }
  // Puts the files written into staging() in place of DIR's result files, as one set. Throws
  // std::runtime_error (DIR keeps its previous set) if the folder cannot be swapped.
  void publish();

 private:
  std::string dir_;      // as given, for messages
  std::string target_;   // absolute, normalised
  std::string staging_;  // .NAME.new beside it
  std::string lock_;     // .NAME.lock beside it
  int lock_fd_ = -1;
  bool had_previous_ = false;
  bool published_ = false;
};

}  // namespace fabricsim::sim

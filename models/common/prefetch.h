// Cache hints: asks the CPU for the lines a model will touch soon. Not hardware: nothing in a
// model changes, only where its data waits (a hint for a record a thousand devices' work away
// overlaps its miss with the work before it).
#pragma once

#include <cstdint>

namespace fabricsim {

// Asks for every 64 B line of [from, to).
inline void prefetch_lines(const void* from, const void* to) {
  const auto end = reinterpret_cast<uintptr_t>(to);
  for (uintptr_t l = reinterpret_cast<uintptr_t>(from) & ~uintptr_t{63}; l < end; l += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(l));
}

// The same for object `o`, whole.
template <class T>
void prefetch_object(const T& o) {
  prefetch_lines(&o, &o + 1);
}

}  // namespace fabricsim

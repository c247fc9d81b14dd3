// One round of a spin-wait: tells the core it is spinning, so the other hyperthread and the wait's end
// lose less (a no-op where the CPU has no such hint).
#pragma once

namespace psgrad {

inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace psgrad

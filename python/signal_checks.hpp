// Long C++ work under Python: the GIL released, Ctrl-C still heard.
#pragma once

#include <functional>

namespace psgrad::python {

// Runs `work` on a thread of its own while the calling thread waits with the GIL released, taking it
// back every 100 ms so that Python runs its signal handlers (Ctrl-C raises KeyboardInterrupt there).
// When a handler raises, request_stop() is called once and the work is still waited for: the
// exception reaches the caller only once the work has ended (and saved what it saves). `work` must not
// throw. Call with the GIL held.
void run_checking_signals(const std::function<void()>& work, const std::function<void()>& request_stop);

}  // namespace psgrad::python

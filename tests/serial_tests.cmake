# Test cases that need both cores to themselves: CTest runs each of them alone. Included after the
# discovered doctest entries exist (TEST_INCLUDE_FILES runs in order).
set_tests_properties(
  "a worker with a thread of its own takes on halves of its server's steps, and the weights come out the same"
  PROPERTIES RUN_SERIAL TRUE)
set_tests_properties(
  "a plain sync server wakes its process's step helper, and the weights come out as from one thread"
  PROPERTIES RUN_SERIAL TRUE)

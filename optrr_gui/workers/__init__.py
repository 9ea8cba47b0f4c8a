"""Where long work runs: :mod:`.runner` (the Qt task runner: threads, channels, generations), :mod:`.gc_guard`
and :mod:`.jobs` (the Qt-free, picklable job functions the runner calls, in a thread or in a worker process of
:mod:`optrr_engine.process_pool`)."""

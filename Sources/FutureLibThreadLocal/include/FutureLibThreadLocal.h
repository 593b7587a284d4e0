#ifndef FUTURELIB_THREAD_LOCAL_H
#define FUTURELIB_THREAD_LOCAL_H

/// One pointer per thread, read and written in a few instructions: FutureLib keeps its per-thread
/// state's address here (the trampoline's depth, deferred work), so that a `.synchronous`
/// continuation does not pay a `pthread_getspecific` call per run (callgrind `futurelib-map`).
/// A pthread key still owns the state and releases it when the thread exits; its destructor
/// clears this pointer first.
///
/// The accessors are `static inline`, so Swift inlines them; Swift cannot name a C thread-local
/// variable itself.
extern _Thread_local void *_Nullable futurelib_thread_local_state;

static inline void *_Nullable futurelib_thread_local_get(void) {
    return futurelib_thread_local_state;
}

static inline void futurelib_thread_local_set(void *_Nullable state) {
    futurelib_thread_local_state = state;
}

#endif

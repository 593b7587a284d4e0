#ifndef FUTURELIB_VAPOR_READING_SLOT_H
#define FUTURELIB_VAPOR_READING_SLOT_H

/// The client-disconnect observer whose read the current thread is passing down its connection's
/// pipeline (FutureLibVapor's `ReadingObserver`), or NULL: in an executable on Linux, read and
/// written in a few instructions, where `pthread_getspecific`/`pthread_setspecific` cost a call
/// each, three times a request (`make bench-http-instructions`); in a shared library, or on Darwin,
/// through the platform's thread-local accessor, still no dearer than those. Unretained: the
/// observer's `channelRead` is on the stack while it is set.
///
/// The accessors are `static inline`, so Swift inlines them; Swift cannot name a C thread-local
/// variable itself.
extern _Thread_local void *_Nullable futurelib_vapor_reading_observer;

static inline void *_Nullable futurelib_vapor_reading_observer_get(void) {
    return futurelib_vapor_reading_observer;
}

static inline void futurelib_vapor_reading_observer_set(void *_Nullable observer) {
    futurelib_vapor_reading_observer = observer;
}

#endif

#include "FutureLibThreadLocal.h"

_Thread_local void *_Nullable futurelib_thread_local_state = 0;

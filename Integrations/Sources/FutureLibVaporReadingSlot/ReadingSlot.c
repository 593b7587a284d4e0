#include "FutureLibVaporReadingSlot.h"

_Thread_local void *_Nullable futurelib_vapor_reading_observer = 0;

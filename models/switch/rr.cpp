// RrScheduler is header-only: it is RoundRobinMatcher (islip.cpp) with the RRM pointer rule.
#include "models/switch/rr.h"

import FutureLibAsyncHTTPClient
import FutureLibServiceLifecycle
import IntegrationsTestSupport

print("x")

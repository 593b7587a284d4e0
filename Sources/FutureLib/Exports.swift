@_exported public import Cancellation

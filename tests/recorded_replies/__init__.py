"""Provider replies recorded from the real APIs (trimmed to what the tests need), used
as the bodies a mock transport answers with."""

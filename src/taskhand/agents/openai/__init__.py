"""The openai backend: our own tool loop over an OpenAI-compatible endpoint."""

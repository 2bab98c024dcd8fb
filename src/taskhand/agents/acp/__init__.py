"""The acp backend: any agent speaking the Agent Client Protocol over stdio."""

"""Compute-side toolkit: ProviderTree, the report client, driver shims, the
offline reshape command and the filter scheduler."""

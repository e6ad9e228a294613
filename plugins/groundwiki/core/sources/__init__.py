"""Raw sources: finding them, extracting their text, counting word pieces and chunking. Imports config/, files/ and model/."""

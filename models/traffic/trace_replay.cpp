// placeholder: implementation lands in this file
